import type { MessageKey, Texts } from "../../i18n.js"
import { conditionLimits, type Field, fields, type Group, type Leaf, newGroup, newLeaf, type Node, type Op, opsOf, type TreeProblem } from "./conditionTree.js"

/** What every condition editor gets: the change of one node by id, and the problems found at the last try. */
export interface EditorProps {
  readonly texts: Texts
  readonly disabled: boolean
  readonly problems: ReadonlyArray<TreeProblem>
  readonly onChange: (id: number, change: (node: Node) => Node | undefined) => void
}

const fieldKey = (field: Field) => `rules.field.${field}` as MessageKey
const opKey = (op: Op) => `rules.op.${op}` as MessageKey

/** The hint under a value, by operator: what shape the value takes. */
const valueHint = (leaf: Leaf): MessageKey | undefined =>
  leaf.op === "in" ? "rules.hint.in" : leaf.op === "contains" ? "rules.hint.contains" : leaf.field === "aggregate.revision" ? "rules.hint.number" : undefined

const ProblemText = ({ texts, id, problems }: { readonly texts: Texts; readonly id: number; readonly problems: ReadonlyArray<TreeProblem> }) => {
  const found = problems.find((problem) => problem.id === id)
  return found === undefined ? null : <p id={`c${id}-problem`} className="status">{texts.t(`rules.problem.${found.problem}` as MessageKey)}</p>
}

const LeafEditor = ({ leaf, number, texts, disabled, problems, onChange }: EditorProps & { readonly leaf: Leaf; readonly number: string }) => {
  const { t } = texts
  const id = `c${leaf.id}`
  const hint = valueHint(leaf)
  const problem = problems.some((p) => p.id === leaf.id)
  const set = (change: Partial<Leaf>) => onChange(leaf.id, (node) => ({ ...(node as Leaf), ...change }))
  const describedBy = [hint === undefined ? "" : `${id}-hint`, problem ? `${id}-problem` : ""].filter((part) => part !== "").join(" ")
  return (
    <fieldset className="condition condition--leaf" data-number={number} data-node={leaf.id}>
      <legend>{t("rules.condition", { n: number })}</legend>
      <div className="condition__fields">
        <div className="field">
          <label htmlFor={`${id}-field`}>{t("rules.fieldLabel")}</label>
          <select
            id={`${id}-field`}
            value={leaf.field}
            disabled={disabled}
            onChange={(event) => {
              const field = event.currentTarget.value as Field
              set({ field, ...(opsOf(field).includes(leaf.op) ? {} : { op: "eq" as const }) })
            }}
          >
            {fields.map((field) => <option key={field} value={field}>{t(fieldKey(field))}</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-op`}>{t("rules.opLabel")}</label>
          <select id={`${id}-op`} value={leaf.op} disabled={disabled} onChange={(event) => set({ op: event.currentTarget.value as Op, ...(event.currentTarget.value === "exists" ? { value: "yes" } : leaf.op === "exists" ? { value: "" } : {}) })}>
            {opsOf(leaf.field).map((op) => <option key={op} value={op}>{t(opKey(op))}</option>)}
          </select>
        </div>
        {leaf.op === "exists"
          ? (
            <div className="field">
              <label htmlFor={`${id}-value`}>{t("rules.valueLabel")}</label>
              <select id={`${id}-value`} value={leaf.value === "no" ? "no" : "yes"} disabled={disabled} onChange={(event) => set({ value: event.currentTarget.value })}>
                <option value="yes">{t("rules.exists.yes")}</option>
                <option value="no">{t("rules.exists.no")}</option>
              </select>
            </div>
          )
          : (
            <div className="field">
              <label htmlFor={`${id}-value`}>{t("rules.valueLabel")}</label>
              <input
                id={`${id}-value`}
                value={leaf.value}
                disabled={disabled}
                inputMode={leaf.field === "aggregate.revision" && leaf.op !== "in" ? "numeric" : undefined}
                aria-invalid={problem ? true : undefined}
                {...(describedBy === "" ? {} : { "aria-describedby": describedBy })}
                onChange={(event) => set({ value: event.currentTarget.value })}
              />
              {hint === undefined ? null : <small id={`${id}-hint`} className="hint">{t(hint)}</small>}
            </div>
          )}
      </div>
      <code className="scope-name">{leaf.field}</code>
      <ProblemText texts={texts} id={leaf.id} problems={problems} />
      <div className="actions">
        <button type="button" className="button button--secondary button--small" disabled={disabled} onClick={() => onChange(leaf.id, () => undefined)}>
          {t("rules.removeCondition", { n: number })}
        </button>
      </div>
    </fieldset>
  )
}

/**
 * A group of conditions and, inside it, its items (conditions and groups, nested up to the spec's
 * depth of 6). Every control is a labelled form field; each item is a fieldset named by its
 * number ("Condition 2.1"), the number a dry run's verdicts use.
 */
export const GroupEditor = (props: EditorProps & { readonly group: Group; readonly number: string; readonly depth: number }) => {
  const { group, number, depth, texts, disabled, problems, onChange } = props
  const { t } = texts
  const root = depth === 1
  const full = group.children.length >= conditionLimits.groupItems
  const add = (node: Node) => onChange(group.id, (found) => ({ ...(found as Group), children: [...(found as Group).children, node] }))
  const childNumber = (index: number) => (number === "" ? `${index + 1}` : `${number}.${index + 1}`)
  return (
    <fieldset className={root ? "condition condition--root" : "condition condition--group"} data-number={number} data-node={group.id}>
      <legend>{root ? t("rules.conditions") : t("rules.group", { n: number })}</legend>
      {root && group.children.length === 0
        ? <p id="no-conditions" className="muted">{t("rules.noConditions")}</p>
        : (
          <div className="field">
            <label htmlFor={`c${group.id}-mode`}>{t("rules.modeLabel")}</label>
            <select id={`c${group.id}-mode`} value={group.mode} disabled={disabled} onChange={(event) => {
              // Read now: the event's target is gone by the time the state update runs.
              const mode = event.currentTarget.value as "all" | "any"
              onChange(group.id, (found) => ({ ...(found as Group), mode }))
            }}>
              <option value="all">{t("rules.mode.all")}</option>
              <option value="any">{t("rules.mode.any")}</option>
            </select>
          </div>
        )}
      {group.children.length === 0
        ? null
        : (
          <ol className="condition__items">
            {group.children.map((child, index) => (
              <li key={child.id}>
                {child.kind === "leaf"
                  ? <LeafEditor {...props} leaf={child} number={childNumber(index)} />
                  : <GroupEditor {...props} group={child} number={childNumber(index)} depth={depth + 1} />}
              </li>
            ))}
          </ol>
        )}
      <ProblemText texts={texts} id={group.id} problems={problems} />
      <div className="actions">
        <button type="button" className="button button--secondary button--small" disabled={disabled || full} onClick={() => add(newLeaf())}>
          {root ? t("rules.addCondition") : t("rules.addConditionTo", { n: number })}
        </button>
        {depth < conditionLimits.depth
          ? (
            <button type="button" className="button button--secondary button--small" disabled={disabled || full} onClick={() => add(newGroup())}>
              {root ? t("rules.addGroup") : t("rules.addGroupTo", { n: number })}
            </button>
          )
          : null}
        {root
          ? null
          : (
            <button type="button" className="button button--secondary button--small" disabled={disabled} onClick={() => onChange(group.id, () => undefined)}>
              {t("rules.removeGroup", { n: number })}
            </button>
          )}
      </div>
    </fieldset>
  )
}
