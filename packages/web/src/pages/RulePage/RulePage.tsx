import { useState } from "react"
import { href } from "../../components/Layout.js"
import { LocalTime } from "../../components/LocalTime.js"
import { eventTypeLabel, executionStatusKey, ruleStateKey } from "../../components/rules.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey, Texts } from "../../i18n.js"
import type { RuleActionView, RuleCondition, RuleExecutionView, RuleView } from "../../model.js"
import type { PageProps } from "../types.js"
import { GroupEditor } from "./ConditionEditor.js"
import { filterOf, type Group, type Node, numberOfPath, resetIds, type TreeProblem, treeOf, updateNode } from "./conditionTree.js"

export const title = ({ data, texts }: Pick<PageProps<"rule">, "data" | "texts">) =>
  data.rule?.name ?? texts.t(data.deleted ? "rules.deletedTitle" : "rules.newTitle")

type Api = typeof import("../../browserApi.js")["api"]
type RuleInput = Parameters<Api["automations.dry_run"]>[0]["payload"]["rule"]
type DryRunAnswer = Awaited<ReturnType<Api["automations.dry_run"]>>
type BacktestAnswer = Awaited<ReturnType<Api["automations.backtest"]>>

/** The operations a command.execute action may run (commandOperations in packages/domain/src/automations/Rule.ts). */
const commandOperations = ["tasks.save", "services.save", "jobs.save", "portfolio.save", "articles.save", "resumes.save", "learning.save"] as const
const actionTypes = ["notification.create", "webhook.deliver", "command.execute"] as const
type ActionType = (typeof actionTypes)[number]
const webhookStates = new Set(["prepared", "awaiting_test", "active", "paused", "disabled"])
/** A webhook endpoint's state in words, as its approval page says it. */
const webhookStateKey = (state: string) => (webhookStates.has(state) ? `webhookApproval.state.${state}` : "webhookApproval.state.prepared") as MessageKey
const limits = { nameMax: 160, runsMin: 1, runsMax: 1000, titleMin: 3, titleMax: 160 } as const

const locales = { ru: "ru-RU", en: "en-GB" } as const
/** A stored event's time in an option's text (no element there for LocalTime): UTC, the same on the server and in the browser. */
const utcTime = (texts: Texts, iso: string) =>
  `${new Intl.DateTimeFormat(locales[texts.language], { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }).format(new Date(iso))} UTC`

/** The builder's fields of a rule: what the page edits as text. */
interface Draft {
  readonly name: string
  readonly eventType: string
  readonly actionType: ActionType
  readonly endpointUuid: string
  readonly operationId: string
  readonly title: string
  readonly extra: string
  readonly publicationUuid: string
  readonly expectedRevision: string
  readonly maxRunsPerDay: string
}

const draftOf = (rule: RuleView | undefined, eventTypes: ReadonlyArray<string>, webhooks: ReadonlyArray<{ readonly uuid: string }>): Draft => {
  const action: RuleActionView = rule?.action ?? { type: "notification.create" }
  const data = action.type === "command.execute" ? action.arguments.data : {}
  const { title: actionTitle, ...extra } = data as { readonly title?: unknown }
  return {
    name: rule?.name ?? "",
    eventType: rule?.trigger.eventType ?? (eventTypes.includes("publication.draft_saved") ? "publication.draft_saved" : eventTypes[0] ?? ""),
    actionType: action.type,
    endpointUuid: action.type === "webhook.deliver" ? action.endpointUuid : webhooks[0]?.uuid ?? "",
    operationId: action.type === "command.execute" ? action.operationId : "tasks.save",
    title: typeof actionTitle === "string" ? actionTitle : "",
    extra: Object.keys(extra).length === 0 ? "" : JSON.stringify(extra, null, 2),
    publicationUuid: action.type === "command.execute" ? action.arguments.publicationUuid ?? "" : "",
    expectedRevision: action.type === "command.execute" && action.arguments.expectedRevision !== undefined ? String(action.arguments.expectedRevision) : "",
    maxRunsPerDay: String(rule?.limits.maxRunsPerDay ?? 10)
  }
}

/** A problem of the builder's fields outside the conditions (a message key, `rules.problem.*`). */
type FieldProblem = "name" | "endpoint" | "title" | "extra" | "pair" | "runs"

interface Built {
  readonly rule: RuleInput
  readonly tree: ReadonlyArray<TreeProblem>
  readonly fields: ReadonlyArray<FieldProblem>
}

const build = (draft: Draft, root: Group): Built => {
  const tree: Array<TreeProblem> = []
  const problems: Array<FieldProblem> = []
  const filter = filterOf(root, tree)
  if (draft.name.trim() === "") problems.push("name")
  const runs = Number(draft.maxRunsPerDay)
  if (!Number.isInteger(runs) || runs < limits.runsMin || runs > limits.runsMax) problems.push("runs")
  let action: RuleActionView = { type: "notification.create" }
  if (draft.actionType === "webhook.deliver") {
    if (draft.endpointUuid === "") problems.push("endpoint")
    action = { type: "webhook.deliver", endpointUuid: draft.endpointUuid }
  }
  if (draft.actionType === "command.execute") {
    const title = draft.title.trim()
    if (title.length < limits.titleMin || title.length > limits.titleMax) problems.push("title")
    let extra: Record<string, unknown> = {}
    if (draft.extra.trim() !== "") {
      try {
        const parsed: unknown = JSON.parse(draft.extra)
        if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) extra = parsed as Record<string, unknown>
        else problems.push("extra")
      } catch {
        problems.push("extra")
      }
    }
    const publication = draft.publicationUuid.trim()
    const revision = draft.expectedRevision.trim()
    if ((publication === "") !== (revision === "") || (revision !== "" && !(Number.isInteger(Number(revision)) && Number(revision) >= 1))) problems.push("pair")
    action = {
      type: "command.execute",
      operationId: draft.operationId,
      arguments: { data: { ...extra, title }, ...(publication === "" ? {} : { publicationUuid: publication }), ...(revision === "" ? {} : { expectedRevision: Number(revision) }) }
    }
  }
  const rule = {
    name: draft.name.trim(),
    trigger: { eventType: draft.eventType, ...(filter === undefined ? {} : { filter }) },
    action,
    limits: { maxRunsPerDay: runs }
  }
  return { rule: rule as unknown as RuleInput, tree, fields: problems }
}

/** A value found in the event, as a dry run's verdict shows it. */
const shown = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value))

const byNumber = (a: string, b: string) => {
  const x = a === "" ? [] : a.split(".").map(Number)
  const y = b === "" ? [] : b.split(".").map(Number)
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return x.length - y.length
}

const DryRunVerdicts = ({ answer, texts }: { readonly answer: DryRunAnswer; readonly texts: Texts }) => {
  const { t } = texts
  const entries = answer.trace
    .map((entry) => ({ entry, number: numberOfPath(entry.path) ?? entry.path }))
    .sort((a, b) => byNumber(a.number, b.number))
  return (
    <div id="dry-run-result" className="verdicts" data-matched={answer.matched}>
      <p id="dry-run-verdict" className={answer.matched ? "verdict verdict--yes" : "verdict verdict--no"}>
        <strong>{t(answer.matched ? (answer.wouldSkip === null ? "rules.dry.matched" : "rules.dry.matchedSkipped") : "rules.dry.notMatched")}</strong>
      </p>
      {answer.typeMatches ? null : <p>{t("rules.dry.typeDiffers")}</p>}
      {answer.wouldSkip === null ? null : <p>{t(answer.wouldSkip === "limit" ? "rules.dry.skipLimit" : "rules.dry.skipChain")}</p>}
      <p>{answer.action.valid ? t("rules.dry.actionReady") : t("rules.dry.actionInvalid")}</p>
      {entries.length === 0
        ? <p className="muted">{t("rules.dry.noConditions")}</p>
        : (
          <>
            <h3>{t("rules.dry.verdicts")}</h3>
            <ol id="verdicts" className="verdict-list">
              {entries.map(({ entry, number }) => (
                <li key={entry.path} data-path={entry.path} data-result={entry.result} className={entry.result ? "verdict--yes" : "verdict--no"}>
                  <span aria-hidden="true" className="verdict__mark">{entry.result ? "✓" : "✗"}</span>{" "}
                  <strong>{number === "" ? t("rules.dry.whole") : t(entry.field === undefined ? "rules.group" : "rules.condition", { n: number })}</strong>
                  {": "}
                  {t(entry.result ? "rules.dry.holds" : "rules.dry.fails")}
                  {entry.field === undefined
                    ? null
                    : (
                      <>
                        {" · "}<code>{entry.field}</code>{" "}
                        {entry.op === undefined ? null : <span>{t(`rules.op.${entry.op}` as MessageKey)}</span>}
                        {" · "}
                        {entry.actual === undefined ? t("rules.dry.missing") : <>{t("rules.dry.actual")} <code className="wrap">{shown(entry.actual)}</code></>}
                      </>
                    )}
                </li>
              ))}
            </ol>
          </>
        )}
    </div>
  )
}

const Execution = ({ execution, texts }: { readonly execution: RuleExecutionView; readonly texts: Texts }) => {
  const { t } = texts
  return (
    <li className="row row--stacked execution" data-uuid={execution.uuid} data-status={execution.status}>
      <p className="row__title">
        <span className={execution.status === "succeeded" ? "tag" : "tag tag--muted"}>{t(executionStatusKey(execution.status))}</span>{" "}
        {eventTypeLabel(texts, execution.eventType)}
      </p>
      <p className="card__meta">
        <LocalTime value={execution.createdAt} texts={texts} />
        {execution.finishedAt === undefined ? null : <span>{t("rules.finished")} <LocalTime value={execution.finishedAt} texts={texts} /></span>}
        <span>{t("rules.ruleRevision", { n: execution.ruleRevision })}</span>
        <span>{t("rules.event")} <code className="wrap">{execution.eventUuid}</code></span>
      </p>
      {execution.cancelReason === undefined ? null : <p className="muted">{t("rules.cancelReason")} <code>{execution.cancelReason}</code></p>}
      {execution.attempts.length === 0
        ? <p className="muted">{t("rules.noAttempts")}</p>
        : (
          <ol className="attempts" aria-label={t("rules.attempts")}>
            {execution.attempts.map((attempt, index) => (
              <li key={index} className="attempt" data-outcome={attempt.outcome}>
                {t("rules.attempt", { n: index + 1 })} · <LocalTime value={attempt.attemptedAt} texts={texts} /> · {t("rules.duration", { ms: attempt.durationMs })} · {t(`rules.outcome.${attempt.outcome}` as MessageKey)}
                {attempt.error === undefined ? null : <> · <code>{attempt.error.status} {attempt.error.code}</code></>}
              </li>
            ))}
          </ol>
        )}
    </li>
  )
}

/**
 * One automation rule: its builder (trigger, nested conditions, one of three actions, the daily
 * limit), a dry run against a stored or a synthetic event with a verdict per condition, a
 * backtest over stored events, its state with pause and enable, delete, and its executions.
 * A new rule is saved switched off: it is tried first, then switched on.
 */
export default function RulePage({ data, texts }: PageProps<"rule">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, setMessage, run } = useAction()
  const rule = data.rule
  const [draft, setDraft] = useState(() => draftOf(rule, data.eventTypes, data.webhooks))
  const [root, setRoot] = useState<Group>(() => {
    resetIds()
    return treeOf(rule?.trigger.filter as RuleCondition | undefined)
  })
  const [problems, setProblems] = useState<{ readonly tree: ReadonlyArray<TreeProblem>; readonly fields: ReadonlyArray<FieldProblem> }>({ tree: [], fields: [] })
  const [source, setSource] = useState<"stored" | "synthetic">(data.events.length === 0 ? "synthetic" : "stored")
  const [eventUuid, setEventUuid] = useState(() => (data.events.find((event) => event.type === draft.eventType) ?? data.events[0])?.uuid ?? "")
  const [synthetic, setSynthetic] = useState({ type: draft.eventType, kind: "", uuid: "", revision: "", status: "", objectUuid: "" })
  const [dryRun, setDryRun] = useState<DryRunAnswer | undefined>(undefined)
  const [backtest, setBacktest] = useState<BacktestAnswer | undefined>(undefined)
  const disabled = !hydrated || busy

  const set = (change: Partial<Draft>) => setDraft((now) => ({ ...now, ...change }))
  const change = (id: number, edit: (node: Node) => Node | undefined) => setRoot((now) => (updateNode(now, id, edit) as Group | undefined) ?? now)
  const problem = (field: FieldProblem) => problems.fields.includes(field)
  const problemText = (field: FieldProblem, id: string) => (problem(field) ? <p id={id} className="status">{t(`rules.problem.${field}` as MessageKey)}</p> : null)

  /** The rule as the builder holds it now, or nothing when a field needs fixing first (the problems are shown). */
  const current = (): RuleInput | undefined => {
    const built = build(draft, root)
    setProblems({ tree: built.tree, fields: built.fields })
    if (built.tree.length > 0 || built.fields.length > 0) {
      setMessage("rules.fixFirst")
      return undefined
    }
    return built.rule
  }

  const save = () => {
    const body = current()
    if (body === undefined) return
    if (rule === undefined) {
      void run(
        (api) => api["automations.create"]({ payload: { ...body, requestUuid: requestUuid(), enabled: false } }),
        (answer) => location.assign(href(`/settings/rules/${answer.rule.uuid}`, language))
      )
    } else {
      void run((api) => api["automations.update"]({ path: { uuid: rule.uuid }, payload: { ...body, uuid: rule.uuid, expectedRevision: rule.revision, requestUuid: requestUuid(), enabled: rule.enabled } }))
    }
  }

  /** Pause or enable: the saved rule as it is, its `enabled` turned (automations.update replaces the whole rule). */
  const toggle = (saved: RuleView) => {
    const { trigger, action, limits: ruleLimits, name } = saved
    const body = { name, trigger, action, limits: ruleLimits } as unknown as RuleInput
    void run((api) => api["automations.update"]({ path: { uuid: saved.uuid }, payload: { ...body, uuid: saved.uuid, expectedRevision: saved.revision, requestUuid: requestUuid(), enabled: !saved.enabled } }))
  }

  const remove = (saved: RuleView) => {
    if (!confirm(t("rules.confirmDelete"))) return
    void run((api) => api["automations.delete"]({ path: { uuid: saved.uuid }, payload: { uuid: saved.uuid, requestUuid: requestUuid() } }), () => location.assign(href("/settings/rules", language)))
  }

  const tryIt = () => {
    const body = current()
    if (body === undefined) return
    const ruleBody = { ...body, ...(rule === undefined ? {} : { uuid: rule.uuid }) }
    const trimmed = (value: string) => value.trim()
    const aggregate = {
      ...(trimmed(synthetic.kind) === "" ? {} : { kind: trimmed(synthetic.kind) }),
      ...(trimmed(synthetic.uuid) === "" ? {} : { uuid: trimmed(synthetic.uuid) }),
      ...(trimmed(synthetic.revision) === "" || !Number.isFinite(Number(synthetic.revision)) ? {} : { revision: Number(synthetic.revision) })
    }
    const eventData = {
      ...(trimmed(synthetic.status) === "" ? {} : { status: trimmed(synthetic.status) }),
      ...(trimmed(synthetic.objectUuid) === "" ? {} : { objectUuid: trimmed(synthetic.objectUuid) })
    }
    const event = { type: synthetic.type, aggregate, data: eventData } as unknown as NonNullable<Parameters<Api["automations.dry_run"]>[0]["payload"]["event"]>
    setDryRun(undefined)
    void run(
      (api) => api["automations.dry_run"]({ payload: source === "stored" ? { rule: ruleBody, eventUuid } : { rule: ruleBody, event } }),
      (answer) => setDryRun(answer)
    )
  }

  const runBacktest = () => {
    const body = current()
    if (body === undefined) return
    setBacktest(undefined)
    void run((api) => api["automations.backtest"]({ payload: { rule: body, limit: 100 } }), (answer) => setBacktest(answer))
  }

  // The type's name only: its code is shown beside the field (a Russian page's options hold no English words).
  const typeOption = (type: string) => <option key={type} value={type}>{eventTypeLabel(texts, type)}</option>

  if (rule === undefined && data.deleted) {
    return (
      <div className="narrow-wide">
        <h1>{t("rules.deletedTitle")}</h1>
        <p id="deleted" className="lead">{t("rules.deletedExplain")}</p>
        <Executions executions={data.executions} texts={texts} />
        <p><a href={href("/settings/rules", language)}>{t("rules.title")}</a></p>
      </div>
    )
  }

  return (
    <div className="narrow-wide rule-page">
      <p><a href={href("/settings/rules", language)}>{t("rules.title")}</a></p>
      <h1>{rule?.name ?? t("rules.newTitle")}</h1>
      {rule === undefined
        ? <p className="lead">{t("rules.newExplain")}</p>
        : (
          <section className="panel" aria-labelledby="state-heading">
            <h2 id="state-heading">{t("rules.stateHeading")}</h2>
            <p>
              <span id="rule-state" data-state={rule.state} className={rule.state === "active" ? "tag" : "tag tag--muted"}>{t(ruleStateKey(rule.state))}</span>{" "}
              {rule.suspendedReason === undefined ? null : <span className="muted">{t(`rules.suspended.${rule.suspendedReason}` as MessageKey)}</span>}
            </p>
            <p id="used-today-text">{t("rules.usedToday", { used: rule.runsToday, max: rule.limits.maxRunsPerDay })}</p>
            <meter id="used-today" min={0} max={rule.limits.maxRunsPerDay} value={Math.min(rule.runsToday, rule.limits.maxRunsPerDay)} aria-labelledby="used-today-text" />
            <p className="hint">{t("rules.limitExplain")}</p>
            <div className="actions">
              <button type="button" id="toggle" className="button" disabled={disabled} onClick={() => toggle(rule)}>{t(rule.enabled ? "rules.pause" : "rules.enable")}</button>
              <button type="button" id="delete" className="button button--danger" disabled={disabled} onClick={() => remove(rule)}>{t("rules.delete")}</button>
            </div>
          </section>
        )}
      <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>

      <form id="rule-form" className="stack" onSubmit={(event) => { event.preventDefault(); save() }} noValidate>
        <h2>{t("rules.builder")}</h2>
        <div className="field">
          <label htmlFor="rule-name">{t("rules.name")}</label>
          <input id="rule-name" value={draft.name} maxLength={limits.nameMax} required disabled={disabled} aria-invalid={problem("name") ? true : undefined} onChange={(event) => set({ name: event.currentTarget.value })} />
          {problemText("name", "rule-name-problem")}
        </div>
        <div className="field">
          <label htmlFor="rule-event-type">{t("rules.eventType")}</label>
          <select id="rule-event-type" value={draft.eventType} disabled={disabled} onChange={(event) => set({ eventType: event.currentTarget.value })}>
            {data.eventTypes.map(typeOption)}
          </select>
          <code className="scope-name">{draft.eventType}</code>
        </div>
        <GroupEditor group={root} number="" depth={1} texts={texts} disabled={disabled} problems={problems.tree} onChange={change} />
        <fieldset className="rule-action">
          <legend>{t("rules.actionHeading")}</legend>
          {actionTypes.map((type) => (
            <div key={type} className="preset check">
              <input type="radio" id={`action-${type}`} name="action" value={type} checked={draft.actionType === type} disabled={disabled} onChange={() => set({ actionType: type })} aria-describedby={`action-${type}-help`} />{" "}
              <label htmlFor={`action-${type}`}>{t(`rules.actionType.${type}` as MessageKey)}</label>
              <small id={`action-${type}-help`} className="muted"> {t(`rules.actionHelp.${type}` as MessageKey)}</small>
            </div>
          ))}
          {draft.actionType === "webhook.deliver"
            ? data.webhooks.length === 0
              ? <p id="no-webhooks" className="muted">{t("rules.noWebhooks")} <a href={href("/settings/integrations", language)}>{t("account.integrations")}</a></p>
              : (
                <div className="field">
                  <label htmlFor="action-endpoint">{t("rules.endpoint")}</label>
                  <select id="action-endpoint" value={draft.endpointUuid} disabled={disabled} onChange={(event) => set({ endpointUuid: event.currentTarget.value })}>
                    {data.webhooks.map((w) => <option key={w.uuid} value={w.uuid}>{w.url} · {t(webhookStateKey(w.state))}</option>)}
                  </select>
                  {problemText("endpoint", "endpoint-problem")}
                </div>
              )
            : null}
          {draft.actionType === "command.execute"
            ? (
              <div className="stack">
                <div className="field">
                  <label htmlFor="action-operation">{t("rules.operation")}</label>
                  <select id="action-operation" value={draft.operationId} disabled={disabled} onChange={(event) => set({ operationId: event.currentTarget.value })}>
                    {commandOperations.map((op) => <option key={op} value={op}>{t(`rules.operation.${op}` as MessageKey)}</option>)}
                  </select>
                  <code className="scope-name">{draft.operationId}</code>
                </div>
                <div className="field">
                  <label htmlFor="action-title">{t("rules.draftTitle")}</label>
                  <input id="action-title" value={draft.title} maxLength={limits.titleMax} disabled={disabled} onChange={(event) => set({ title: event.currentTarget.value })} />
                  {problemText("title", "title-problem")}
                </div>
                <div className="field">
                  <label htmlFor="action-extra">{t("rules.draftExtra")}</label>
                  <textarea id="action-extra" rows={4} value={draft.extra} disabled={disabled} aria-describedby="action-extra-hint" onChange={(event) => set({ extra: event.currentTarget.value })} />
                  <small id="action-extra-hint" className="hint">{t("rules.draftExtraHint")}</small>
                  {problemText("extra", "extra-problem")}
                </div>
                <div className="field">
                  <label htmlFor="action-publication">{t("rules.publicationUuid")}</label>
                  <input id="action-publication" value={draft.publicationUuid} disabled={disabled} aria-describedby="action-pair-hint" onChange={(event) => set({ publicationUuid: event.currentTarget.value })} />
                </div>
                <div className="field">
                  <label htmlFor="action-revision">{t("rules.expectedRevision")}</label>
                  <input id="action-revision" inputMode="numeric" value={draft.expectedRevision} disabled={disabled} aria-describedby="action-pair-hint" onChange={(event) => set({ expectedRevision: event.currentTarget.value })} />
                  <small id="action-pair-hint" className="hint">{t("rules.pairHint")}</small>
                  {problemText("pair", "pair-problem")}
                </div>
              </div>
            )
            : null}
        </fieldset>
        <div className="field">
          <label htmlFor="rule-runs">{t("rules.maxRunsPerDay")}</label>
          <input id="rule-runs" type="number" min={limits.runsMin} max={limits.runsMax} value={draft.maxRunsPerDay} disabled={disabled} aria-describedby="rule-runs-hint" onChange={(event) => set({ maxRunsPerDay: event.currentTarget.value })} />
          <small id="rule-runs-hint" className="hint">{t("rules.maxRunsHint")}</small>
          {problemText("runs", "runs-problem")}
        </div>
        <div className="actions">
          <button type="submit" id="save" className="button" disabled={disabled}>{t(rule === undefined ? "rules.create" : "rules.save")}</button>
        </div>
      </form>

      <section className="panel" aria-labelledby="dry-run-heading">
        <h2 id="dry-run-heading">{t("rules.dryRun")}</h2>
        <p>{t("rules.dryRunExplain")}</p>
        <fieldset className="presets">
          <legend>{t("rules.dry.source")}</legend>
          <div className="preset check">
            <input type="radio" id="source-stored" name="source" value="stored" checked={source === "stored"} disabled={disabled} onChange={() => setSource("stored")} />{" "}
            <label htmlFor="source-stored">{t("rules.dry.stored")}</label>
          </div>
          <div className="preset check">
            <input type="radio" id="source-synthetic" name="source" value="synthetic" checked={source === "synthetic"} disabled={disabled} onChange={() => setSource("synthetic")} />{" "}
            <label htmlFor="source-synthetic">{t("rules.dry.synthetic")}</label>
          </div>
        </fieldset>
        {source === "stored"
          ? data.events.length === 0
            ? <p id="no-stored" className="muted">{t("rules.dry.noStored")}</p>
            : (
              <div className="field">
                <label htmlFor="dry-event">{t("rules.dry.event")}</label>
                <select id="dry-event" value={eventUuid} disabled={disabled} onChange={(event) => setEventUuid(event.currentTarget.value)}>
                  {data.events.map((event) => (
                    <option key={event.uuid} value={event.uuid}>{eventTypeLabel(texts, event.type)} · {event.aggregateKind} · {utcTime(texts, event.occurredAt)}</option>
                  ))}
                </select>
              </div>
            )
          : (
            <div className="synthetic">
              <div className="field">
                <label htmlFor="syn-type">{t("rules.field.type")}</label>
                <select id="syn-type" value={synthetic.type} disabled={disabled} onChange={(event) => setSynthetic({ ...synthetic, type: event.currentTarget.value })}>
                  {data.eventTypes.map(typeOption)}
                </select>
              </div>
              {([["kind", "aggregate.kind"], ["uuid", "aggregate.uuid"], ["revision", "aggregate.revision"], ["status", "data.status"], ["objectUuid", "data.objectUuid"]] as const).map(([key, field]) => (
                <div key={key} className="field">
                  <label htmlFor={`syn-${key}`}>{t(`rules.field.${field}` as MessageKey)}</label>
                  <input id={`syn-${key}`} value={synthetic[key]} disabled={disabled} inputMode={key === "revision" ? "numeric" : undefined} onChange={(event) => setSynthetic({ ...synthetic, [key]: event.currentTarget.value })} />
                </div>
              ))}
            </div>
          )}
        <div className="actions">
          <button type="button" id="dry-run" className="button" disabled={disabled || (source === "stored" && eventUuid === "")} onClick={tryIt}>{t("rules.dry.run")}</button>
        </div>
        {dryRun === undefined ? null : <DryRunVerdicts answer={dryRun} texts={texts} />}
      </section>

      <section className="panel" aria-labelledby="backtest-heading">
        <h2 id="backtest-heading">{t("rules.backtest")}</h2>
        <p>{t("rules.backtestExplain")}</p>
        <div className="actions">
          <button type="button" id="run-backtest" className="button" disabled={disabled} onClick={runBacktest}>{t("rules.backtestRun")}</button>
        </div>
        {backtest === undefined
          ? null
          : (
            <div id="backtest-result" data-scanned={backtest.scanned} data-matched={backtest.matched}>
              <p id="backtest-summary"><strong>{t("rules.backtestSummary", { matched: backtest.matched, scanned: backtest.scanned })}</strong></p>
              {backtest.items.length === 0
                ? null
                : (
                  <ol id="backtest-items" className="verdict-list">
                    {backtest.items.map((item) => (
                      <li key={item.eventUuid} data-event={item.eventUuid} data-matched={item.matched} className={item.matched ? "verdict--yes" : "verdict--no"}>
                        <span aria-hidden="true" className="verdict__mark">{item.matched ? "✓" : "✗"}</span>{" "}
                        <LocalTime value={String(item.occurredAt)} texts={texts} />{" · "}
                        {t(item.matched ? (item.wouldSkip === "chain" ? "rules.backtestSkipChain" : "rules.backtestFired") : "rules.backtestNot")}
                        {" · "}<code className="wrap">{item.eventUuid}</code>
                      </li>
                    ))}
                  </ol>
                )}
            </div>
          )}
      </section>

      {rule === undefined ? null : <Executions executions={data.executions} texts={texts} />}
    </div>
  )
}

const Executions = ({ executions, texts }: { readonly executions: ReadonlyArray<RuleExecutionView>; readonly texts: Texts }) => (
  <section aria-labelledby="executions-heading">
    <h2 id="executions-heading">{texts.t("rules.executions")}</h2>
    <p className="hint">{texts.t("rules.executionsExplain")}</p>
    {executions.length === 0
      ? <p id="no-executions" className="muted">{texts.t("rules.noExecutions")}</p>
      : <ol id="executions" className="rows">{executions.map((execution) => <Execution key={execution.uuid} execution={execution} texts={texts} />)}</ol>}
  </section>
)
