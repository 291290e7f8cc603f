/**
 * Operation ids read as groups: `client.tasks.save(…)` is `client["tasks.save"](…)`, and
 * `client.learning.courses.list()` is `client["learning.courses.list"]()`. Ids without a dot
 * (`listPublications`) are on the client itself only.
 */
type GroupNames<Id> = Id extends `${infer Group}.${string}` ? Group : never

type Leaves<C> = { readonly [Id in keyof C as Id extends `${string}.${string}` ? never : Id]: C[Id] }

type Members<C, Group extends string> = { readonly [Id in keyof C as Id extends `${Group}.${infer Rest}` ? Rest : never]: C[Id] }

type Group<C> = Leaves<C> & Groups<C>

/** The groups of a flat client: one property per first part of a dotted id, nested by each further dot. */
export type Groups<C> = { readonly [Name in GroupNames<keyof C>]: Group<Members<C, Name>> }

/**
 * Adds the groups of `flat`'s dotted ids to `flat` itself, as properties that `Object.keys` does
 * not list (the client's own keys stay exactly its operation ids). An id that is also the name of
 * a group (`a.b` beside `a.b.c`) is refused: the catalog has none, and a call would be ambiguous.
 */
export const withGroups = <C extends Record<string, unknown>>(flat: C): C & Groups<C> => {
  const groups: Record<string, Record<string, unknown>> = {}
  for (const [id, method] of Object.entries(flat)) {
    const parts = id.split(".")
    if (parts.length < 2) continue
    let node: Record<string, unknown> = groups
    for (const part of parts.slice(0, -1)) {
      const next = node[part] ?? (node[part] = {})
      if (typeof next !== "object" || next === null) throw new Error(`The operation ${id} names a group that is also an operation`)
      node = next as Record<string, unknown>
    }
    const leaf = parts[parts.length - 1]!
    if (leaf in node) throw new Error(`The operation ${id} is also the name of a group`)
    node[leaf] = method
  }
  for (const [name, group] of Object.entries(groups)) {
    if (name in flat) throw new Error(`The operation ${name} is also the name of a group`)
    Object.defineProperty(flat, name, { value: group, enumerable: false })
  }
  return flat as C & Groups<C>
}
