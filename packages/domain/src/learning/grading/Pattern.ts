/**
 * A linear-time regular expression engine for the `pattern` checker: patterns are
 * compiled to a Thompson NFA and run as a set of states over the input (Pike/RE2 style), so a
 * match costs O(input × program) whatever the pattern: no backtracking, no catastrophes. The
 * syntax is the common subset: literals, `.`, classes `[a-z]` `[^…]`, escapes `\d \w \s \D \W \S`
 * and `\` before a metacharacter, groups `(…)` `(?:…)`, alternation `|`, quantifiers `* + ?
 * {m} {m,} {m,n}` (lazy forms accepted; they match the same set), anchors `^ $`. Backreferences
 * and lookaround cannot be run in linear time and are refused, as is any pattern whose program
 * would exceed `maxProgram` states (counted repetition expands). A pattern matches the whole reply.
 */

export const maxPatternLength = 500
export const maxProgram = 5000
export const maxInputLength = 100_000

type Test = (code: number) => boolean

type Node =
  | { readonly kind: "test"; readonly test: Test }
  | { readonly kind: "empty" }
  | { readonly kind: "bol" }
  | { readonly kind: "eol" }
  | { readonly kind: "concat"; readonly parts: ReadonlyArray<Node> }
  | { readonly kind: "alt"; readonly options: ReadonlyArray<Node> }
  | { readonly kind: "repeat"; readonly node: Node; readonly min: number; readonly max: number | undefined }

export class PatternError extends Error {}

const isDigit: Test = (c) => c >= 48 && c <= 57
const isWord: Test = (c) => isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95
const isSpace: Test = (c) => c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x2028 || c === 0x2029 || c === 0xfeff
const not = (test: Test): Test => (c) => !test(c)

const lower = (c: number) => String.fromCodePoint(c).toLowerCase().codePointAt(0)!
const upper = (c: number) => String.fromCodePoint(c).toUpperCase().codePointAt(0)!

const classEscape = (ch: string): Test | undefined => {
  switch (ch) {
    case "d":
      return isDigit
    case "D":
      return not(isDigit)
    case "w":
      return isWord
    case "W":
      return not(isWord)
    case "s":
      return isSpace
    case "S":
      return not(isSpace)
    default:
      return undefined
  }
}

const controlEscapes: Readonly<Record<string, number>> = { n: 10, r: 13, t: 9, f: 12, v: 11, "0": 0 }

class Parser {
  private i = 0
  private readonly chars: ReadonlyArray<string>
  constructor(source: string, private readonly caseInsensitive: boolean) {
    this.chars = [...source]
  }

  parse(): Node {
    const node = this.alternation()
    if (this.i < this.chars.length) throw new PatternError(`unexpected "${this.chars[this.i]}" at ${this.i}`)
    return node
  }

  private peek() {
    return this.chars[this.i]
  }

  private literal(code: number): Test {
    if (!this.caseInsensitive) return (c) => c === code
    const a = lower(code)
    const b = upper(code)
    return (c) => c === code || c === a || c === b
  }

  private alternation(): Node {
    const options = [this.concatenation()]
    while (this.peek() === "|") {
      this.i++
      options.push(this.concatenation())
    }
    return options.length === 1 ? options[0]! : { kind: "alt", options }
  }

  private concatenation(): Node {
    const parts: Array<Node> = []
    while (this.i < this.chars.length && this.peek() !== "|" && this.peek() !== ")") parts.push(this.quantified())
    return parts.length === 0 ? { kind: "empty" } : parts.length === 1 ? parts[0]! : { kind: "concat", parts }
  }

  private number(): number | undefined {
    let digits = ""
    while (this.peek() !== undefined && /[0-9]/.test(this.peek()!)) digits += this.chars[this.i++]
    return digits === "" ? undefined : Number(digits)
  }

  private quantified(): Node {
    let node = this.atom()
    for (;;) {
      const ch = this.peek()
      let min: number
      let max: number | undefined
      if (ch === "*") [min, max] = [0, undefined]
      else if (ch === "+") [min, max] = [1, undefined]
      else if (ch === "?") [min, max] = [0, 1]
      else if (ch === "{") {
        const start = this.i
        this.i++
        const low = this.number()
        if (low === undefined) {
          // A `{` that does not start a count is a literal brace.
          this.i = start
          return node
        }
        let high: number | undefined = low
        if (this.peek() === ",") {
          this.i++
          high = this.number()
        }
        if (this.peek() !== "}") throw new PatternError(`unclosed count at ${start}`)
        if (high !== undefined && high < low) throw new PatternError(`count {${low},${high}} goes down`)
        if (low > 1000 || (high ?? 0) > 1000) throw new PatternError("a count is at most 1000")
        ;[min, max] = [low, high]
      } else return node
      this.i++
      if (this.peek() === "?") this.i++ // lazy: same language
      if (node.kind === "bol" || node.kind === "eol") throw new PatternError("an anchor cannot repeat")
      node = { kind: "repeat", node, min, max }
    }
  }

  private escape(inClass: boolean): Test {
    const ch = this.chars[this.i++]
    if (ch === undefined) throw new PatternError("the pattern ends with \\")
    const cls = classEscape(ch)
    if (cls !== undefined) return cls
    if (/[1-9]/.test(ch)) throw new PatternError("backreferences are not supported (they need backtracking)")
    if (ch === "b" || ch === "B") {
      if (inClass) return this.literal(8)
      throw new PatternError("word boundaries are not supported")
    }
    const control = controlEscapes[ch]
    if (control !== undefined) return this.literal(control)
    if (/[A-Za-z]/.test(ch)) throw new PatternError(`unknown escape \\${ch}`)
    return this.literal(ch.codePointAt(0)!)
  }

  private atom(): Node {
    const ch = this.chars[this.i++]!
    switch (ch) {
      case "(": {
        if (this.peek() === "?") {
          if (this.chars[this.i + 1] !== ":") throw new PatternError("lookaround and named groups are not supported")
          this.i += 2
        }
        const inner = this.alternation()
        if (this.chars[this.i++] !== ")") throw new PatternError("unclosed group")
        return inner
      }
      case ")":
        throw new PatternError(`unmatched ) at ${this.i - 1}`)
      case "*":
      case "+":
      case "?":
        throw new PatternError(`nothing to repeat at ${this.i - 1}`)
      case "^":
        return { kind: "bol" }
      case "$":
        return { kind: "eol" }
      case ".":
        return { kind: "test", test: (c) => c !== 10 && c !== 13 }
      case "[":
        return { kind: "test", test: this.characterClass() }
      case "\\":
        return { kind: "test", test: this.escape(false) }
      default:
        return { kind: "test", test: this.literal(ch.codePointAt(0)!) }
    }
  }

  private classMember(): { readonly test: Test; readonly code?: number } {
    const ch = this.chars[this.i++]
    if (ch === undefined) throw new PatternError("unclosed character class")
    if (ch === "\\") {
      const next = this.peek()
      const test = this.escape(true)
      const code = next !== undefined && classEscape(next) === undefined
        ? (controlEscapes[next] ?? (next === "b" ? 8 : next.codePointAt(0)!))
        : undefined
      return code === undefined ? { test } : { test, code }
    }
    const code = ch.codePointAt(0)!
    return { test: this.literal(code), code }
  }

  private characterClass(): Test {
    const negated = this.peek() === "^"
    if (negated) this.i++
    const tests: Array<Test> = []
    let first = true
    while (this.peek() !== "]" || first) {
      if (this.peek() === undefined) throw new PatternError("unclosed character class")
      first = false
      const from = this.classMember()
      if (this.peek() === "-" && this.chars[this.i + 1] !== undefined && this.chars[this.i + 1] !== "]") {
        this.i++
        const to = this.classMember()
        if (from.code === undefined || to.code === undefined) throw new PatternError("a range needs single characters at both ends")
        if (to.code < from.code) throw new PatternError("a range goes down")
        const [lo, hi] = [from.code, to.code]
        tests.push(this.caseInsensitive
          ? (c) => (c >= lo && c <= hi) || (lower(c) >= lo && lower(c) <= hi) || (upper(c) >= lo && upper(c) <= hi)
          : (c) => c >= lo && c <= hi)
      } else tests.push(from.test)
    }
    this.i++
    const any: Test = (c) => tests.some((test) => test(c))
    return negated ? not(any) : any
  }
}

// ---- the program ----------------------------------------------------------------------------------

type Instruction =
  | { op: "test"; test: Test; next: number }
  | { op: "split"; a: number; b: number }
  | { op: "jump"; next: number }
  | { op: "bol"; next: number }
  | { op: "eol"; next: number }
  | { op: "match" }

class Compiler {
  readonly program: Array<Instruction> = []

  private emit(instruction: Instruction): number {
    if (this.program.length >= maxProgram) throw new PatternError(`the pattern is too large (over ${maxProgram} states)`)
    this.program.push(instruction)
    return this.program.length - 1
  }

  /** Compiles `node` to continue at `next`; returns its entry state. */
  compile(node: Node, next: number): number {
    switch (node.kind) {
      case "empty":
        return next
      case "test":
        return this.emit({ op: "test", test: node.test, next })
      case "bol":
        return this.emit({ op: "bol", next })
      case "eol":
        return this.emit({ op: "eol", next })
      case "concat": {
        let entry = next
        for (let k = node.parts.length - 1; k >= 0; k--) entry = this.compile(node.parts[k]!, entry)
        return entry
      }
      case "alt": {
        let entry = this.compile(node.options[node.options.length - 1]!, next)
        for (let k = node.options.length - 2; k >= 0; k--) {
          const option = this.compile(node.options[k]!, next)
          entry = this.emit({ op: "split", a: option, b: entry })
        }
        return entry
      }
      case "repeat": {
        let entry = next
        if (node.max === undefined) {
          // x* : loop = split(body → loop, next)
          const loop = this.emit({ op: "split", a: -1, b: next })
          const body = this.compile(node.node, loop)
          ;(this.program[loop] as { a: number }).a = body
          entry = loop
        } else {
          // x{0,k} as nested optionals: each copy may continue with the next copy or skip to `next`.
          for (let k = node.max; k > node.min; k--) {
            const body = this.compile(node.node, entry)
            entry = this.emit({ op: "split", a: body, b: next })
          }
        }
        for (let k = 0; k < node.min; k++) entry = this.compile(node.node, entry)
        return entry
      }
    }
  }
}

export interface Pattern {
  readonly source: string
  /** Whether the whole input matches. */
  readonly matches: (input: string) => boolean
}

/**
 * Compiles a pattern, or throws `PatternError` explaining why it is refused (too long, unsupported
 * construct, program too large).
 */
export const compilePattern = (source: string, options: { readonly caseInsensitive?: boolean | undefined } = {}): Pattern => {
  if ([...source].length > maxPatternLength) throw new PatternError(`a pattern is at most ${maxPatternLength} characters`)
  const ast = new Parser(source, options.caseInsensitive === true).parse()
  const compiler = new Compiler()
  const accept = compiler.program.push({ op: "match" }) - 1
  const start = compiler.compile(ast, accept)
  const program = compiler.program
  const matches = (input: string): boolean => {
    const codes = Array.from(input, (ch) => ch.codePointAt(0)!)
    if (codes.length > maxInputLength) return false
    let current: Array<number> = []
    let next: Array<number> = []
    const seen = new Int32Array(program.length).fill(-1)
    // Adds a state and follows its ε-moves (an explicit stack: deep programs never overflow).
    const add = (list: Array<number>, state: number, position: number, generation: number) => {
      const stack = [state]
      while (stack.length > 0) {
        const s = stack.pop()!
        if (seen[s] === generation) continue
        seen[s] = generation
        const instruction = program[s]!
        switch (instruction.op) {
          case "split":
            stack.push(instruction.b, instruction.a)
            break
          case "jump":
            stack.push(instruction.next)
            break
          case "bol":
            if (position === 0) stack.push(instruction.next)
            break
          case "eol":
            if (position === codes.length) stack.push(instruction.next)
            break
          default:
            list.push(s)
        }
      }
    }
    add(current, start, 0, 0)
    for (let position = 0; position < codes.length; position++) {
      const code = codes[position]!
      next = []
      for (const s of current) {
        const instruction = program[s]!
        if (instruction.op === "test" && instruction.test(code)) add(next, instruction.next, position + 1, position + 1)
      }
      current = next
      if (current.length === 0) return false
    }
    return current.some((s) => program[s]!.op === "match")
  }
  return { source, matches }
}

/** Why a pattern is refused, or undefined when it compiles. */
export const patternProblem = (source: string, caseInsensitive?: boolean): string | undefined => {
  try {
    compilePattern(source, { caseInsensitive })
    return undefined
  } catch (error) {
    if (error instanceof PatternError) return error.message
    throw error
  }
}
