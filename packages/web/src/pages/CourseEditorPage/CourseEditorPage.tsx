import { useEffect, useState } from "react"
import { CourseHead, intOf, linesOf, requestUuid, Status, useAuthoringAction } from "../../components/authoring.js"
import { labelOf } from "../../components/learning.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey } from "../../i18n.js"
import type { AuthoringGrading, AuthoringNode, CheckerView, IssueView, PreflightView } from "../../model.js"
import { authoringCourseOf, checkerOf, issuesOf, preflightOf } from "../../components/authoringViews.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"courseEditor">, "data" | "texts">) => `${data.course.title} · ${texts.t("authoring.tab.editor")}`

type Texts = PageProps<"courseEditor">["texts"]
type Api = typeof import("../../browserApi.js")["api"]
type UpdatePayload = Parameters<Api["learning.courses.update"]>[0]["payload"]
type CheckerPayload = Parameters<Api["learning.checkers.create"]>[0]["payload"]

const stepTypes = ["text", "video", "quiz", "assignment", "code"] as const
const gradedTypes = new Set(["quiz", "assignment", "code"])
const reviewModes = ["none", "staff", "peer", "self"] as const
const lateModes = ["accept", "refuse", "penalty"] as const
const ruleKinds = ["exact", "pattern", "numeric"] as const

/** A key no node of the tree has: the prefix and a few random letters (NodeKey's alphabet). */
const freshKey = (prefix: string, nodes: ReadonlyArray<AuthoringNode>) => {
  const taken = new Set(nodes.map((node) => node.nodeKey))
  for (;;) {
    const key = `${prefix}-${Math.random().toString(36).slice(2, 8)}`
    if (!taken.has(key)) return key
  }
}

/** The grading a new step of a type starts with: a quiz checks answers, an assignment is reviewed by staff, code by a checker. */
const gradingFor = (stepType: string): AuthoringGrading | undefined =>
  stepType === "quiz" ? { maxPoints: 10, attempts: 3 }
  : stepType === "assignment" ? { maxPoints: 10, review: { mode: "staff" } }
  : stepType === "code" ? { maxPoints: 10 }
  : undefined

/** An object some of whose fields an edit clears (undefined: the field is removed). */
type Loose<A> = { [K in keyof A]?: A[K] | undefined }

/** Without the keys whose value is undefined (what a cleared field of the form becomes). */
const compact = <A extends object>(value: Loose<A>): A => JSON.parse(JSON.stringify(value)) as A

/** A quiz's accepted answers as saved: trimmed, the blank lines of the text area left out (none left: no check). */
const withCleanAnswers = (node: AuthoringNode): AuthoringNode => {
  const check = node.grading?.check
  if (node.grading === undefined || check === undefined || check["kind"] !== "exact" || !Array.isArray(check["answers"])) return node
  const answers = (check["answers"] as Array<unknown>).map((answer) => String(answer).trim()).filter((answer) => answer !== "")
  return { ...node, grading: compact<AuthoringGrading>({ ...node.grading, check: answers.length === 0 ? undefined : { ...check, answers } }) }
}

/** A node and every node under it. */
const subtreeKeys = (nodes: ReadonlyArray<AuthoringNode>, root: string): ReadonlySet<string> => {
  const inside = new Set([root])
  for (let grown = true; grown;) {
    grown = false
    for (const node of nodes) {
      if (node.parentKey !== undefined && inside.has(node.parentKey) && !inside.has(node.nodeKey)) {
        inside.add(node.nodeKey)
        grown = true
      }
    }
  }
  return inside
}

/** An issue in the page's language, by its code; a code the catalogs do not know keeps the service's words. */
const issueText = (texts: Texts, issue: IssueView, nodes: ReadonlyArray<AuthoringNode>) => {
  const key = `authoring.issue.${issue.code}` as MessageKey
  const text = texts.t(key, { title: nodes.find((node) => node.nodeKey === issue.nodeKey)?.title ?? issue.nodeKey ?? "" })
  return text === key ? issue.message : text
}

/** A checker's rule in a line: its kind and what it accepts. */
const ruleSummary = (texts: Texts, rules: unknown): string => {
  const r = (rules ?? {}) as Record<string, unknown>
  const kind = labelOf(texts, "authoring.rule", String(r["kind"] ?? ""))
  if (Array.isArray(r["answers"])) return `${kind}: ${r["answers"].join(" | ")}`
  if (typeof r["pattern"] === "string") return `${kind}: ${r["pattern"]}`
  if (typeof r["value"] === "number") return `${kind}: ${r["value"]} ± ${String(r["tolerance"] ?? 0)}`
  return kind
}

/** A preflight's results: each reference case, what it had to be, what the checker said, passed or not. */
const Preflight = ({ texts, preflight, checker }: { readonly texts: Texts; readonly preflight: PreflightView; readonly checker: CheckerView }) => {
  const { t } = texts
  return (
    <div className="preflight">
      <p>
        <strong>{t("authoring.preflight.result")}</strong>{" "}
        <span className={preflight.passed === true ? "tag tag--passed" : preflight.passed === false ? "tag tag--failed" : "tag tag--muted"}>
          {preflight.passed === true ? t("authoring.preflight.passed") : preflight.passed === false ? t("authoring.preflight.failed") : labelOf(texts, "authoring.jobStatus", preflight.status)}
        </span>
      </p>
      <ol className="preflight__cases">
        {preflight.cases.map((c) => (
          <li key={c.index} className={c.passed ? "case case--passed" : "case case--failed"}>
            <code>{checker.referenceCases[c.index]?.reply ?? c.name ?? `#${c.index + 1}`}</code>{" "}
            {t(c.expected === "correct" ? "authoring.case.mustAccept" : "authoring.case.mustRefuse")}
            {" → "}{c.verdict === undefined ? (c.platformError ?? "—") : labelOf(texts, "learning.verdict", c.verdict)}{" · "}
            <strong>{t(c.passed ? "authoring.case.passed" : "authoring.case.failed")}</strong>
          </li>
        ))}
      </ol>
    </div>
  )
}

/** The course's checkers: each with its rule, its tests (reference cases), its state and preflight; a form for a new declarative one. */
const Checkers = ({ texts, course, checkers, setCheckers }: {
  readonly texts: Texts
  readonly course: string
  readonly checkers: ReadonlyArray<CheckerView>
  readonly setCheckers: (update: (all: ReadonlyArray<CheckerView>) => ReadonlyArray<CheckerView>) => void
}) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAuthoringAction()
  const [done, setDone] = useState<MessageKey | undefined>(undefined)
  const [kind, setKind] = useState<typeof ruleKinds[number]>("exact")
  const [checkerKind, setCheckerKind] = useState<"declarative" | "http">("declarative")
  /** Suspends a ready checker or resumes a suspended one, with the reason the control history keeps. */
  const control = (checker: CheckerView, reason: string) =>
    void run((api) => {
      const input = { path: { course, checker: checker.uuid }, payload: { requestUuid: requestUuid(), expectedRevision: checker.revision, reason } }
      return checker.status === "suspended" ? api["learning.checkers.resume"](input) : api["learning.checkers.suspend"](input)
    }, (now) => {
      setCheckers((all) => all.map((c) => c.uuid === now.uuid ? checkerOf(now, c.preflight) : c))
      setDone(now.status === "suspended" ? "authoring.checker.suspended" : "authoring.checker.resumed")
    })
  const preflight = (checker: CheckerView) =>
    void run(async (api) => {
      const job = await api["learning.checkers.preflight"]({ path: { course, checker: checker.uuid }, payload: { requestUuid: requestUuid() } })
      const [now, result] = await Promise.all([
        api["learning.checkers.get"]({ path: { course, checker: checker.uuid } }),
        api["learning.preflights.get"]({ path: { course, job: job.uuid } })
      ])
      return checkerOf(now, preflightOf(result))
    }, (now) => {
      setCheckers((all) => all.map((c) => c.uuid === now.uuid ? now : c))
      setDone(now.preflight?.passed === true ? "authoring.preflight.donePassed" : "authoring.preflight.doneFailed")
    })
  return (
    <section aria-labelledby="checkers" className="panel">
      <h2 id="checkers">{t("authoring.checkers")}</h2>
      <p className="hint">{t("authoring.checkers.hint")}</p>
      {checkers.length === 0 ? <p>{t("authoring.checkers.none")}</p> : (
        <ul className="rows">
          {checkers.map((checker) => (
            <li key={checker.uuid} className="row row--stacked checker" data-uuid={checker.uuid}>
              <h3 className="row__title">{checker.name}</h3>
              <p className="card__meta">
                <span className={`tag checker-status checker-status--${checker.status}`}>{labelOf(texts, "authoring.checkerStatus", checker.status)}</span>
                <span>{labelOf(texts, "authoring.checkerKind", checker.kind)}</span>
                <span>{t("authoring.checkerVersion", { n: checker.version })}</span>
              </p>
              {checker.rules === undefined ? null : <p>{ruleSummary(texts, checker.rules)}</p>}
              {checker.url === undefined ? null : <p className="checker__url">{t("authoring.checker.at", { url: checker.url })}</p>}
              <p className="muted">{t("authoring.tests")}</p>
              <ul>
                {checker.referenceCases.map((c, index) => (
                  <li key={index}><code>{c.reply}</code> {t(c.expected === "correct" ? "authoring.case.mustAccept" : "authoring.case.mustRefuse")}</li>
                ))}
              </ul>
              {checker.preflight === undefined ? null : <Preflight texts={texts} preflight={checker.preflight} checker={checker} />}
              {checker.status === "ready" || checker.status === "suspended" ? (
                <form className="checker-control" onSubmit={(event) => {
                  event.preventDefault()
                  const reason = String(new FormData(event.currentTarget).get("reason") ?? "").trim()
                  if (reason !== "") control(checker, reason)
                }}>
                  <div className="field">
                    <label htmlFor={`reason-${checker.uuid}`}>{t(checker.status === "ready" ? "authoring.checker.suspendWhy" : "authoring.checker.resumeWhy")}</label>
                    <input id={`reason-${checker.uuid}`} name="reason" required maxLength={1000} />
                  </div>
                  <p>
                    <button type="submit" className="button button--secondary button--small" disabled={!hydrated || busy}>
                      {t(checker.status === "ready" ? "authoring.checker.suspend" : "authoring.checker.resume")}
                    </button>
                  </p>
                </form>
              ) : null}
                            {checker.status === "draft" || checker.status === "preflight_failed" ? (
                <p>
                  <button type="button" className="button button--small" disabled={!hydrated || busy} onClick={() => preflight(checker)}
                    aria-label={t("authoring.preflight.runOf", { name: checker.name })}>
                    {t("authoring.preflight.run")}
                  </button>
                </p>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      <Status texts={texts} message={message} done={done} />
      <details className="new-checker">
        <summary>{t("authoring.checker.new")}</summary>
        <form
          className="stack"
          onSubmit={(event) => {
            event.preventDefault()
            const form = new FormData(event.currentTarget)
            const value = (name: string) => String(form.get(name) ?? "")
            const replaces = value("replaces")
            const timeoutMs = intOf(value("timeout"))
            const common = {
              requestUuid: requestUuid(), name: value("name").trim(),
              referenceCases: [
                ...linesOf(value("accept")).map((reply) => ({ reply, expected: "correct" as const })),
                ...linesOf(value("refuse")).map((reply) => ({ reply, expected: "wrong" as const }))
              ],
              ...(replaces === "" ? {} : { replaces })
            }
            const rules = kind === "exact"
              ? { kind, answers: linesOf(value("answers")) }
              : kind === "pattern"
              ? { kind, pattern: value("pattern").trim() }
              : { kind, value: Number(value("value")), tolerance: Number(value("tolerance") || "0") }
            const payload: CheckerPayload = checkerKind === "declarative"
              ? { ...common, kind: "declarative", rules: rules as CheckerPayload["rules"] }
              : { ...common, kind: "http", url: value("url").trim(), secret: value("secret"), ...(timeoutMs === undefined ? {} : { timeoutMs }) }
            const target = event.currentTarget
            void run((api) => api["learning.checkers.create"]({ path: { course }, payload }), (created) => {
              setCheckers((all) => [...all, checkerOf(created)])
              setDone("authoring.checker.created")
              target.reset()
            })
          }}
        >
          <div className="field">
            <label htmlFor="checker-name">{t("authoring.checker.name")}</label>
            <input id="checker-name" name="name" required maxLength={120} />
          </div>
          <div className="field">
            <label htmlFor="checker-type">{t("authoring.checker.type")}</label>
            <select id="checker-type" value={checkerKind} onChange={(event) => setCheckerKind(event.target.value as typeof checkerKind)}>
              <option value="declarative">{labelOf(texts, "authoring.checkerKind", "declarative")}</option>
              <option value="http">{labelOf(texts, "authoring.checkerKind", "http")}</option>
            </select>
          </div>
          {checkers.length === 0 ? null : (
            <div className="field">
              <label htmlFor="checker-replaces">{t("authoring.checker.replaces")}</label>
              <select id="checker-replaces" name="replaces" defaultValue="">
                <option value="">{t("authoring.checker.replacesNone")}</option>
                {checkers.filter((c) => c.status !== "superseded").map((c) => (
                  <option key={c.uuid} value={c.uuid}>{t("authoring.checker.replacesOf", { name: c.name, n: c.version })}</option>
                ))}
              </select>
            </div>
          )}
          {checkerKind === "http" ? (
            <>
              <div className="field">
                <label htmlFor="checker-url">{t("authoring.checker.url")}</label>
                <input id="checker-url" name="url" type="url" required maxLength={2000} placeholder="https://" />
              </div>
              <div className="field">
                <label htmlFor="checker-secret">{t("authoring.checker.secret")}</label>
                <input id="checker-secret" name="secret" type="password" autoComplete="new-password" minLength={24} maxLength={256} required aria-describedby="checker-secret-hint" />
                <p className="hint" id="checker-secret-hint">{t("authoring.checker.secretHint")}</p>
              </div>
              <div className="field">
                <label htmlFor="checker-timeout">{t("authoring.checker.timeout")}</label>
                <input id="checker-timeout" name="timeout" type="number" min={100} max={30000} />
              </div>
            </>
          ) : (
          <>
          <div className="field">
            <label htmlFor="checker-kind">{t("authoring.checker.rule")}</label>
            <select id="checker-kind" value={kind} onChange={(event) => setKind(event.target.value as typeof kind)}>
              {ruleKinds.map((k) => <option key={k} value={k}>{labelOf(texts, "authoring.rule", k)}</option>)}
            </select>
          </div>
          {kind === "exact" ? (
            <div className="field">
              <label htmlFor="checker-answers">{t("authoring.checker.answers")}</label>
              <textarea id="checker-answers" name="answers" rows={3} required />
            </div>
          ) : kind === "pattern" ? (
            <div className="field">
              <label htmlFor="checker-pattern">{t("authoring.checker.pattern")}</label>
              <input id="checker-pattern" name="pattern" required maxLength={500} />
            </div>
          ) : (
            <div className="authoring-pair">
              <div className="field">
                <label htmlFor="checker-value">{t("authoring.checker.value")}</label>
                <input id="checker-value" name="value" type="number" step="any" required />
              </div>
              <div className="field">
                <label htmlFor="checker-tolerance">{t("authoring.checker.tolerance")}</label>
                <input id="checker-tolerance" name="tolerance" type="number" step="any" min={0} />
              </div>
            </div>
          )}
          </>
          )}
          <div className="field">
            <label htmlFor="checker-accept">{t("authoring.checker.accept")}</label>
            <textarea id="checker-accept" name="accept" rows={3} />
          </div>
          <div className="field">
            <label htmlFor="checker-refuse">{t("authoring.checker.refuse")}</label>
            <textarea id="checker-refuse" name="refuse" rows={3} />
          </div>
          <p><button type="submit" className="button button--secondary" disabled={!hydrated || busy}>{t("authoring.checker.create")}</button></p>
        </form>
      </details>
    </section>
  )
}

/** The open node's editor: its title and place, a step's content by type, grading and dates. */
const NodeEditor = ({ texts, node, nodes, checkers, issues, change, move, remove }: {
  readonly texts: Texts
  readonly node: AuthoringNode
  readonly nodes: ReadonlyArray<AuthoringNode>
  readonly checkers: ReadonlyArray<CheckerView>
  readonly issues: ReadonlyArray<IssueView>
  readonly change: (patch: Loose<AuthoringNode>) => void
  readonly move: (by: -1 | 1) => void
  readonly remove: () => void
}) => {
  const { t } = texts
  const hydrated = useHydrated()
  const id = (field: string) => `node-${field}`
  const grading = node.grading
  const setGrading = (patch: Loose<AuthoringGrading>) => change({ grading: compact<AuthoringGrading>({ ...(grading ?? { maxPoints: 10 }), ...patch }) })
  const check = (grading?.check ?? {}) as Record<string, unknown>
  const inside = subtreeKeys(nodes, node.nodeKey)
  const modules = nodes.filter((n) => n.kind === "module" && !inside.has(n.nodeKey))
  const graded = node.kind === "step" && gradedTypes.has(node.stepType ?? "")
  const checker = checkers.find((c) => c.uuid === grading?.checkerUuid)
  const bodyLabel: MessageKey = `authoring.body.${node.stepType ?? "text"}` as MessageKey
  return (
    <section className="panel node-editor" aria-labelledby="node-heading" data-node={node.nodeKey}>
      <h2 id="node-heading">{node.kind === "module" ? t("authoring.node.module", { title: node.title }) : t("authoring.node.step", { title: node.title })}</h2>
      {issues.length === 0 ? null : (
        <ul className="issues" aria-label={t("authoring.issues.here")}>
          {issues.map((issue, index) => (
            <li key={index} className={`issue issue--${issue.severity}`}>
              <span className={issue.severity === "error" ? "tag tag--warning" : "tag tag--muted"}>{labelOf(texts, "authoring.severity", issue.severity)}</span>{" "}
              {issueText(texts, issue, nodes)}
            </li>
          ))}
        </ul>
      )}
      <div className="stack">
        <div className="field">
          <label htmlFor={id("title")}>{t("authoring.node.title")}</label>
          <input id={id("title")} value={node.title} maxLength={200} required onChange={(event) => change({ title: event.target.value })} />
        </div>
        <div className="field">
          <label htmlFor={id("parent")}>{t("authoring.node.parent")}</label>
          <select id={id("parent")} value={node.parentKey ?? ""} onChange={(event) => change({ parentKey: event.target.value === "" ? undefined : event.target.value })}>
            <option value="">{t("authoring.node.top")}</option>
            {modules.map((m) => <option key={m.nodeKey} value={m.nodeKey}>{m.title}</option>)}
          </select>
        </div>
        {node.kind === "module" ? null : (
          <>
            <div className="field">
              <label htmlFor={id("type")}>{t("authoring.node.type")}</label>
              <select id={id("type")} value={node.stepType ?? "text"} onChange={(event) => {
                const stepType = event.target.value
                change({ stepType, grading: gradedTypes.has(stepType) ? (grading ?? gradingFor(stepType)) : undefined })
              }}>
                {stepTypes.map((type) => <option key={type} value={type}>{labelOf(texts, "learning.stepType", type)}</option>)}
              </select>
            </div>
            <div className="field">
              <label htmlFor={id("body")}>{t(bodyLabel)}</label>
              <textarea id={id("body")} rows={node.stepType === "code" ? 10 : 6} value={node.body ?? ""} maxLength={50000}
                className={node.stepType === "code" ? "code-input" : undefined}
                onChange={(event) => change({ body: event.target.value })} />
            </div>
          </>
        )}
        {node.kind === "step" && node.stepType === "quiz" ? (
          <fieldset className="answers">
            <legend>{t("authoring.quiz.answers")}</legend>
            <div className="field">
              <label htmlFor={id("check-kind")}>{t("authoring.checker.rule")}</label>
              <select id={id("check-kind")} value={String(check["kind"] ?? "exact")} onChange={(event) => {
                const kind = event.target.value
                setGrading({ check: kind === "exact" ? { kind, answers: ["?"] } : kind === "pattern" ? { kind, pattern: ".*" } : { kind, value: 0 } })
              }}>
                {ruleKinds.map((k) => <option key={k} value={k}>{labelOf(texts, "authoring.rule", k)}</option>)}
              </select>
            </div>
            {(check["kind"] ?? "exact") === "exact" ? (
              <div className="field">
                <label htmlFor={id("answers")}>{t("authoring.checker.answers")}</label>
                <textarea id={id("answers")} rows={3}
                  value={Array.isArray(check["answers"]) ? (check["answers"] as Array<string>).join("\n") : ""}
                  onChange={(event) => {
                    const answers = event.target.value.split("\n")
                    setGrading({ check: answers.every((a) => a.trim() === "") ? undefined : { ...check, kind: "exact", answers } })
                  }} />
              </div>
            ) : check["kind"] === "pattern" ? (
              <div className="field">
                <label htmlFor={id("pattern")}>{t("authoring.checker.pattern")}</label>
                <input id={id("pattern")} value={String(check["pattern"] ?? "")} onChange={(event) => setGrading({ check: { kind: "pattern", pattern: event.target.value } })} />
              </div>
            ) : (
              <div className="authoring-pair">
                <div className="field">
                  <label htmlFor={id("value")}>{t("authoring.checker.value")}</label>
                  <input id={id("value")} type="number" step="any" value={String(check["value"] ?? "")}
                    onChange={(event) => setGrading({ check: { ...check, kind: "numeric", value: Number(event.target.value) } })} />
                </div>
                <div className="field">
                  <label htmlFor={id("tolerance")}>{t("authoring.checker.tolerance")}</label>
                  <input id={id("tolerance")} type="number" step="any" min={0} value={String(check["tolerance"] ?? "")}
                    onChange={(event) => setGrading({ check: { ...check, kind: "numeric", tolerance: Number(event.target.value || "0") } })} />
                </div>
              </div>
            )}
          </fieldset>
        ) : null}
        {node.kind === "step" && node.stepType === "code" ? (
          <fieldset className="code-tests">
            <legend>{t("authoring.code.tests")}</legend>
            <div className="field">
              <label htmlFor={id("checker")}>{t("authoring.code.checker")}</label>
              <select id={id("checker")} value={grading?.checkerUuid ?? ""} onChange={(event) => setGrading({ checkerUuid: event.target.value === "" ? undefined : event.target.value, check: undefined })}>
                <option value="">{t("authoring.code.noChecker")}</option>
                {checkers.map((c) => <option key={c.uuid} value={c.uuid}>{`${c.name} (${labelOf(texts, "authoring.checkerStatus", c.status)})`}</option>)}
              </select>
            </div>
            {checker === undefined ? <p className="hint">{t("authoring.code.hint")}</p> : (
              <ul>
                {checker.referenceCases.map((c, index) => (
                  <li key={index}><code>{c.reply}</code> {t(c.expected === "correct" ? "authoring.case.mustAccept" : "authoring.case.mustRefuse")}</li>
                ))}
              </ul>
            )}
          </fieldset>
        ) : null}
        {graded ? (
          <fieldset className="grading">
            <legend>{t("authoring.grading")}</legend>
            <div className="authoring-pair">
              <div className="field">
                <label htmlFor={id("points")}>{t("authoring.grading.points")}</label>
                <input id={id("points")} type="number" min={0} max={1000} value={grading?.maxPoints ?? 10}
                  onChange={(event) => setGrading({ maxPoints: intOf(event.target.value) ?? 0 })} />
              </div>
              <div className="field">
                <label htmlFor={id("threshold")}>{t("authoring.grading.threshold")}</label>
                <input id={id("threshold")} type="number" min={0} max={1000} value={grading?.passThreshold ?? ""}
                  onChange={(event) => setGrading({ passThreshold: intOf(event.target.value) })} />
              </div>
              <div className="field">
                <label htmlFor={id("attempts")}>{t("authoring.grading.attempts")}</label>
                <input id={id("attempts")} type="number" min={1} max={100} value={grading?.attempts ?? ""} aria-describedby={id("attempts-hint")}
                  onChange={(event) => setGrading({ attempts: intOf(event.target.value) })} />
                <p className="hint" id={id("attempts-hint")}>{t("authoring.grading.attemptsHint")}</p>
              </div>
              <div className="field">
                <label htmlFor={id("selection")}>{t("authoring.grading.selection")}</label>
                <select id={id("selection")} value={grading?.selection ?? "last"} onChange={(event) => setGrading({ selection: event.target.value })}>
                  <option value="last">{t("authoring.selection.last")}</option>
                  <option value="best">{t("authoring.selection.best")}</option>
                </select>
              </div>
              <div className="field">
                <label htmlFor={id("review")}>{t("authoring.grading.review")}</label>
                <select id={id("review")} value={grading?.review?.mode ?? "none"}
                  onChange={(event) => setGrading({ review: event.target.value === "none" ? undefined : { ...grading?.review, mode: event.target.value } })}>
                  {reviewModes.map((mode) => <option key={mode} value={mode}>{labelOf(texts, "authoring.review", mode)}</option>)}
                </select>
              </div>
              {grading?.review === undefined ? null : (
                <div className="field">
                  <label htmlFor={id("release")}>{t("authoring.grading.release")}</label>
                  <select id={id("release")} value={grading.review.release ?? "auto"}
                    onChange={(event) => setGrading({ review: { ...grading.review!, release: event.target.value } })}>
                    <option value="auto">{t("authoring.release.auto")}</option>
                    <option value="manual">{t("authoring.release.manual")}</option>
                  </select>
                </div>
              )}
              <div className="field">
                <label htmlFor={id("late")}>{t("authoring.grading.late")}</label>
                <select id={id("late")} value={grading?.latePolicy?.mode ?? "accept"}
                  onChange={(event) => setGrading({ latePolicy: event.target.value === "accept" ? undefined : { mode: event.target.value, ...(event.target.value === "penalty" ? { penaltyPercent: 20 } : {}) } })}>
                  {lateModes.map((mode) => <option key={mode} value={mode}>{labelOf(texts, "authoring.late", mode)}</option>)}
                </select>
              </div>
              {grading?.latePolicy?.mode !== "penalty" ? null : (
                <div className="field">
                  <label htmlFor={id("penalty")}>{t("authoring.grading.penalty")}</label>
                  <input id={id("penalty")} type="number" min={0} max={100} value={grading.latePolicy.penaltyPercent ?? ""}
                    onChange={(event) => setGrading({ latePolicy: compact<NonNullable<AuthoringGrading["latePolicy"]>>({ mode: "penalty", penaltyPercent: intOf(event.target.value) }) })} />
                </div>
              )}
            </div>
          </fieldset>
        ) : null}
        {node.kind === "step" ? (
          <fieldset className="dates">
            <legend>{t("authoring.dates")}</legend>
            <div className="authoring-pair">
              <div className="field">
                <label htmlFor={id("unlock")}>{t("authoring.dates.unlock")}</label>
                <input id={id("unlock")} type="number" min={0} max={3650} value={node.unlockOffsetDays ?? ""} onChange={(event) => change({ unlockOffsetDays: intOf(event.target.value) })} />
              </div>
              <div className="field">
                <label htmlFor={id("due")}>{t("authoring.dates.due")}</label>
                <input id={id("due")} type="number" min={0} max={3650} value={node.dueOffsetDays ?? ""} onChange={(event) => change({ dueOffsetDays: intOf(event.target.value) })} />
              </div>
            </div>
          </fieldset>
        ) : null}
        <p className="actions">
          <button type="button" className="button button--secondary button--small" disabled={!hydrated} onClick={() => move(-1)}>{t("authoring.node.up")}</button>
          <button type="button" className="button button--secondary button--small" disabled={!hydrated} onClick={() => move(1)}>{t("authoring.node.down")}</button>
          <button type="button" className="button button--secondary button--small" disabled={!hydrated} onClick={remove}>{t("authoring.node.remove")}</button>
        </p>
      </div>
    </section>
  )
}

/**
 * The course editor: settings, the module and step tree (add, move, remove) beside the open
 * node's editor, the checkers with their preflights, validation with every issue at its step,
 * publishing with a changelog, and the versions. The tree is saved whole (learning.courses.update).
 */
export default function CourseEditorPage({ state, data, texts }: PageProps<"courseEditor">) {
  const { t } = texts
  const hydrated = useHydrated()
  const save = useAuthoringAction()
  const check = useAuthoringAction()
  const course = data.course.uuid
  const [nodes, setNodes] = useState<ReadonlyArray<AuthoringNode>>(data.course.nodes)
  const [settings, setSettings] = useState({ title: data.course.title, summary: data.course.summary, visibility: data.course.visibility })
  const [revision, setRevision] = useState(data.course.revision)
  const [dirty, setDirty] = useState(false)
  const [saved, setSaved] = useState<MessageKey | undefined>(undefined)
  const [checkers, setCheckers] = useState(data.checkers)
  const [issues, setIssues] = useState<ReadonlyArray<IssueView>>([])
  const [validated, setValidated] = useState(false)
  // The saved draft's problems, each shown at its step: validate is a POST, which only the browser may send with the session.
  useEffect(() => {
    if (data.course.validation.errors + data.course.validation.warnings === 0) return
    void check.run((api) => api["learning.courses.validate"]({ path: { course } }), (validation) => setIssues(issuesOf(validation)))
  }, [])
  const [selected, setSelected] = useState<string | undefined>(() => {
    const asked = new URLSearchParams(state.query).get("node") ?? ""
    return data.course.nodes.some((node) => node.nodeKey === asked) ? asked : undefined
  })
  const [newStep, setNewStep] = useState<{ readonly type: string; readonly title: string }>({ type: "text", title: "" })
  const [newModule, setNewModule] = useState("")
  const [changelog, setChangelog] = useState("")

  const edit = (next: ReadonlyArray<AuthoringNode>) => {
    setNodes(next)
    setDirty(true)
    setSaved(undefined)
  }
  const open = nodes.find((node) => node.nodeKey === selected)
  const errors = issues.filter((issue) => issue.severity === "error")
  const issuesAt = (key: string) => issues.filter((issue) => issue.nodeKey === key)
  const modules = nodes.filter((node) => node.kind === "module")

  const change = (patch: Loose<AuthoringNode>) => {
    if (open === undefined) return
    edit(nodes.map((node) => node.nodeKey === open.nodeKey ? compact<AuthoringNode>({ ...node, ...patch }) : node))
  }
  const move = (by: -1 | 1) => {
    if (open === undefined) return
    const siblings = nodes.filter((node) => node.parentKey === open.parentKey)
    const other = siblings[siblings.findIndex((node) => node.nodeKey === open.nodeKey) + by]
    if (other === undefined) return
    const at = nodes.indexOf(open)
    const to = nodes.indexOf(other)
    const next = [...nodes]
    next[at] = other
    next[to] = open
    edit(next)
  }
  const remove = () => {
    if (open === undefined) return
    const gone = subtreeKeys(nodes, open.nodeKey)
    edit(nodes.filter((node) => !gone.has(node.nodeKey)))
    setSelected(undefined)
  }

  /** Saves the settings and the tree at the revision read; the answer's tree and revision become the page's. */
  const saveDraft = (api: Api) =>
    api["learning.courses.update"]({
      path: { course },
      payload: {
        requestUuid: requestUuid(), expectedRevision: revision, title: settings.title.trim(), summary: settings.summary, visibility: settings.visibility as "listed",
        nodes: JSON.parse(JSON.stringify(nodes.map(withCleanAnswers))) as UpdatePayload["nodes"]
      }
    }).then((updated) => {
      const now = authoringCourseOf(updated)
      setRevision(now.revision)
      setNodes(now.nodes)
      setDirty(false)
      return now
    })
  const validate = (api: Api) =>
    (dirty ? saveDraft(api) : Promise.resolve(undefined)).then(() => api["learning.courses.validate"]({ path: { course } }))

  const tree = (parent: string | undefined) => {
    const children = nodes.filter((node) => node.parentKey === parent)
    if (children.length === 0) return null
    return (
      <ol className="authoring-tree__list">
        {children.map((node) => {
          const here = issuesAt(node.nodeKey)
          return (
            <li key={node.nodeKey} className={`authoring-tree__node authoring-tree__node--${node.kind}`} data-node={node.nodeKey}>
              <button type="button" className="link-button" aria-current={node.nodeKey === selected ? "true" : undefined} onClick={() => setSelected(node.nodeKey)}>
                {node.title}
              </button>{" "}
              <span className="muted">{node.kind === "module" ? t("authoring.module") : labelOf(texts, "learning.stepType", node.stepType ?? "text")}</span>
              {here.length === 0 ? null : (
                <span className="node-issues">
                  {here.map((issue, index) => (
                    <span key={index} className={issue.severity === "error" ? "tag tag--warning" : "tag tag--muted"}>{issueText(texts, issue, nodes)}</span>
                  ))}
                </span>
              )}
              {node.kind === "module" ? tree(node.nodeKey) : null}
            </li>
          )
        })}
      </ol>
    )
  }

  return (
    <div className="authoring course-editor">
      <CourseHead texts={texts} course={{ uuid: course, title: data.course.title, status: data.course.status, latestVersion: data.course.latestVersion }} current="editor" />

      <section aria-labelledby="settings" className="panel">
        <h2 id="settings">{t("authoring.settings")}</h2>
        <div className="stack">
          <div className="field">
            <label htmlFor="course-title">{t("authoring.settings.title")}</label>
            <input id="course-title" value={settings.title} maxLength={160} required onChange={(event) => {
              setSettings({ ...settings, title: event.target.value })
              setDirty(true)
            }} />
          </div>
          <div className="field">
            <label htmlFor="course-summary">{t("authoring.settings.summary")}</label>
            <textarea id="course-summary" rows={3} maxLength={2000} value={settings.summary} onChange={(event) => {
              setSettings({ ...settings, summary: event.target.value })
              setDirty(true)
            }} />
          </div>
          <div className="field">
            <label htmlFor="course-visibility">{t("authoring.settings.visibility")}</label>
            <select id="course-visibility" value={settings.visibility} onChange={(event) => {
              setSettings({ ...settings, visibility: event.target.value })
              setDirty(true)
            }}>
              {["listed", "unlisted", "private"].map((v) => <option key={v} value={v}>{labelOf(texts, "authoring.visibility", v)}</option>)}
            </select>
          </div>
        </div>
      </section>

      <section aria-labelledby="structure">
        <h2 id="structure">{t("authoring.structure")}</h2>
        <div className="authoring__layout">
          <div className="panel authoring-tree">
            {nodes.length === 0 ? <p>{t("authoring.tree.empty")}</p> : <nav aria-label={t("authoring.tree")}>{tree(undefined)}</nav>}
            <form className="stack add-step" onSubmit={(event) => {
              event.preventDefault()
              if (newStep.title.trim() === "") return
              const parentKey = open === undefined ? modules[0]?.nodeKey : open.kind === "module" ? open.nodeKey : open.parentKey
              const node = compact<AuthoringNode>({
                nodeKey: freshKey(newStep.type, nodes), kind: "step", stepType: newStep.type, title: newStep.title.trim(), body: "",
                parentKey, grading: gradingFor(newStep.type)
              })
              edit([...nodes, node])
              setSelected(node.nodeKey)
              setNewStep({ ...newStep, title: "" })
            }}>
              <h3>{t("authoring.addStep")}</h3>
              <p className="hint">{t("authoring.addStep.hint")}</p>
              <div className="field">
                <label htmlFor="new-step-type">{t("authoring.node.type")}</label>
                <select id="new-step-type" value={newStep.type} onChange={(event) => setNewStep({ ...newStep, type: event.target.value })}>
                  {stepTypes.map((type) => <option key={type} value={type}>{labelOf(texts, "learning.stepType", type)}</option>)}
                </select>
              </div>
              <div className="field">
                <label htmlFor="new-step-title">{t("authoring.addStep.title")}</label>
                <input id="new-step-title" value={newStep.title} maxLength={200} onChange={(event) => setNewStep({ ...newStep, title: event.target.value })} />
              </div>
              <p><button type="submit" className="button button--secondary button--small" disabled={!hydrated}>{t("authoring.addStep.add")}</button></p>
            </form>
            <form className="stack add-module" onSubmit={(event) => {
              event.preventDefault()
              if (newModule.trim() === "") return
              const node: AuthoringNode = { nodeKey: freshKey("module", nodes), kind: "module", title: newModule.trim() }
              edit([...nodes, node])
              setSelected(node.nodeKey)
              setNewModule("")
            }}>
              <div className="field">
                <label htmlFor="new-module-title">{t("authoring.addModule.title")}</label>
                <input id="new-module-title" value={newModule} maxLength={200} onChange={(event) => setNewModule(event.target.value)} />
              </div>
              <p><button type="submit" className="button button--secondary button--small" disabled={!hydrated}>{t("authoring.addModule.add")}</button></p>
            </form>
          </div>
          <div className="authoring__main">
            {open === undefined
              ? <p className="panel">{t("authoring.node.choose")}</p>
              : <NodeEditor key={open.nodeKey} texts={texts} node={open} nodes={nodes} checkers={checkers} issues={issuesAt(open.nodeKey)} change={change} move={move} remove={remove} />}
          </div>
        </div>
        <div className="save-bar">
          <p className="save-bar__state" aria-live="polite">{dirty ? t("authoring.unsaved") : saved === undefined ? "" : t(saved)}</p>
          <button type="button" className="button" disabled={!hydrated || save.busy} onClick={() => void save.run(saveDraft, () => setSaved("authoring.saved"))}>
            {t("authoring.save")}
          </button>
          <Status texts={texts} message={save.message} />
        </div>
      </section>

      <Checkers texts={texts} course={course} checkers={checkers} setCheckers={(update) => setCheckers(update)} />

      <section aria-labelledby="publish" className="panel">
        <h2 id="publish">{t("authoring.publish")}</h2>
        <p className="hint">{t("authoring.validate.hint")}</p>
        <p>
          <button type="button" className="button button--secondary" disabled={!hydrated || check.busy}
            onClick={() => void check.run(validate, (validation) => {
              setIssues(issuesOf(validation))
              setValidated(true)
            })}>
            {t("authoring.validate")}
          </button>
        </p>
        <div className="validation" aria-live="polite">
          {issues.length === 0
            ? <p className="notice">{validated || data.course.validation.errors + data.course.validation.warnings === 0 ? t("authoring.validate.clean") : ""}</p>
            : (
              <>
                <p>{t("authoring.validate.summary", { errors: errors.length, warnings: issues.length - errors.length })}</p>
                <ul className="issues">
                  {issues.map((issue, index) => (
                    <li key={index} className={`issue issue--${issue.severity}`} data-node={issue.nodeKey}>
                      <span className={issue.severity === "error" ? "tag tag--warning" : "tag tag--muted"}>{labelOf(texts, "authoring.severity", issue.severity)}</span>{" "}
                      {issueText(texts, issue, nodes)}
                      {issue.nodeKey === undefined || !nodes.some((node) => node.nodeKey === issue.nodeKey) ? null : (
                        <>
                          {" "}
                          <button type="button" className="link-button" onClick={() => {
                            setSelected(issue.nodeKey)
                            document.getElementById("structure")?.scrollIntoView()
                          }}>
                            {t("authoring.issue.open", { title: nodes.find((node) => node.nodeKey === issue.nodeKey)?.title ?? "" })}
                          </button>
                        </>
                      )}
                    </li>
                  ))}
                </ul>
              </>
            )}
        </div>
        {data.course.latestVersion === 0 ? null : (
          <p className="muted">
            {t("authoring.diff", { added: data.course.diff.added.length, changed: data.course.diff.changed.length, removed: data.course.diff.removed.length })}
          </p>
        )}
        <form className="stack" onSubmit={(event) => {
          event.preventDefault()
          void check.run(async (api) => {
            const current = dirty ? (await saveDraft(api)).revision : revision
            return api["learning.courses.publish"]({ path: { course }, payload: { requestUuid: requestUuid(), expectedRevision: current, changelog: changelog.trim() } })
          })
        }}>
          <div className="field">
            <label htmlFor="changelog">{t("authoring.changelog")}</label>
            <textarea id="changelog" rows={3} maxLength={5000} value={changelog} onChange={(event) => setChangelog(event.target.value)} />
          </div>
          <p><button type="submit" className="button" disabled={!hydrated || check.busy}>{t("authoring.publish.do")}</button></p>
        </form>
        <Status texts={texts} message={check.message} />
      </section>

      <section aria-labelledby="versions">
        <h2 id="versions">{t("authoring.versions")}</h2>
        {data.versions.length === 0 ? <p>{t("authoring.versions.none")}</p> : (
          <ol className="rows versions" reversed>
            {data.versions.map((version) => (
              <li key={version.number} className="row row--stacked">
                <h3 className="row__title">{t("authoring.version", { n: version.number })}</h3>
                <p className="card__meta"><time dateTime={version.publishedAt}>{texts.date(version.publishedAt)}</time></p>
                {version.changelog === "" ? null : <p>{version.changelog}</p>}
              </li>
            ))}
          </ol>
        )}
      </section>
    </div>
  )
}
