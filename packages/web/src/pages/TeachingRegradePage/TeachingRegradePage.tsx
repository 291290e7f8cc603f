import { useState } from "react"
import { href } from "../../components/Layout.js"
import { labelOf, points } from "../../components/learning.js"
import { fieldValue, TeachingHeader } from "../../components/teaching.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { RegradePlanView } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"teachingRegrade">, "data" | "texts">) => `${texts.t("teaching.regrade.title")} · ${data.course.courseTitle}`

type Props = PageProps<"teachingRegrade">
type Texts = Props["texts"]

const ruleKinds = ["full_credit", "excuse", "max_points", "accept_answer", "late_penalty"] as const
type RuleKind = typeof ruleKinds[number]

/** A new plan: the step, the rule and whom it touches; the API computes its difference without changing a grade (a dry run). */
const NewPlan = ({ data, texts }: { readonly data: Props["data"]; readonly texts: Texts }) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [kind, setKind] = useState<RuleKind>("full_credit")
  const create = () => {
    const nodeKey = fieldValue("regrade-step")
    const raw = fieldValue("regrade-value")
    const value = Number(raw)
    const rule = kind === "max_points" ? { kind, maxPoints: value }
      : kind === "late_penalty" ? { kind, penaltyPercent: value }
      : kind === "accept_answer" ? { kind, answer: raw }
      : { kind }
    const numeric = kind === "max_points" || kind === "late_penalty"
    if (numeric && (raw === "" || !Number.isInteger(value) || value < 0 || kind === "late_penalty" && value > 100) || kind === "accept_answer" && raw === "") {
      return document.getElementById("regrade-value")?.focus()
    }
    const which = fieldValue("regrade-which") as "latest" | "best" | "all"
    const policy = fieldValue("regrade-policy") as "any" | "only_if_higher"
    void run(
      (api) => api["learning.regrade_plans.create"]({
        path: { course: data.course.courseUuid },
        payload: { requestUuid: requestUuid(), nodeKey, rule: rule as { kind: "full_credit" }, selector: { which }, policy }
      }),
      (plan) => location.assign(href(`/teaching/${data.course.courseUuid}/regrades`, language, { plan: plan.uuid }))
    )
  }
  if (data.steps.length === 0) return <p>{t("teaching.regrade.noSteps")}</p>
  return (
    <section className="panel" aria-labelledby="new-plan">
      <h2 id="new-plan">{t("teaching.regrade.new")}</h2>
      <p className="hint">{t("teaching.regrade.hint")}</p>
      <div className="stack">
        <label htmlFor="regrade-step">{t("teaching.regrade.step")}</label>
        <select id="regrade-step">{data.steps.map((step) => <option key={step.nodeKey} value={step.nodeKey}>{step.title}</option>)}</select>
        <label htmlFor="regrade-rule">{t("teaching.regrade.rule")}</label>
        <select id="regrade-rule" value={kind} onChange={(event) => setKind(event.target.value as RuleKind)}>
          {ruleKinds.map((rule) => <option key={rule} value={rule}>{labelOf(texts, "teaching.rule", rule)}</option>)}
        </select>
        {kind === "full_credit" || kind === "excuse" ? null : (
          <>
            <label htmlFor="regrade-value">{t(`teaching.regrade.value.${kind}`)}</label>
            {kind === "accept_answer"
              ? <input id="regrade-value" maxLength={10000} />
              : <input id="regrade-value" type="number" min={0} max={kind === "late_penalty" ? 100 : 100000} step={1} inputMode="numeric" />}
          </>
        )}
        <label htmlFor="regrade-which">{t("teaching.regrade.which")}</label>
        <select id="regrade-which" defaultValue="latest">
          {(["latest", "best", "all"] as const).map((which) => <option key={which} value={which}>{labelOf(texts, "teaching.which", which)}</option>)}
        </select>
        <label htmlFor="regrade-policy">{t("teaching.regrade.policy")}</label>
        <select id="regrade-policy" defaultValue="only_if_higher">
          {(["only_if_higher", "any"] as const).map((policy) => <option key={policy} value={policy}>{labelOf(texts, "teaching.policy", policy)}</option>)}
        </select>
        <p><button type="button" className="button" disabled={!hydrated || busy} onClick={create}>{t("teaching.regrade.preview")}</button></p>
        <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      </div>
    </section>
  )
}

/** A plan's difference, learner by learner (before → after, or why a grade stays), and its commit. */
const Plan = ({ data, plan, texts }: { readonly data: Props["data"]; readonly plan: RegradePlanView; readonly texts: Texts }) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const changing = plan.items.filter((item) => item.skipped === undefined).length
  return (
    <section aria-labelledby="plan" className="regrade-plan" data-status={plan.status}>
      <h2 id="plan">{t("teaching.regrade.plan", { step: plan.stepTitle })}</h2>
      <p className="card__meta">
        <span className="tag plan-status">{labelOf(texts, "teaching.planStatus", plan.status)}</span>
        <span>{labelOf(texts, "teaching.rule", plan.rule.kind)}{plan.rule.value === undefined ? "" : `: ${plan.rule.value}`}</span>
        <span>{labelOf(texts, "teaching.policy", plan.policy)}</span>
      </p>
      <p className="plan-summary">
        {t("teaching.regrade.summary", { n: plan.itemCount, changing })}
        {" "}{t("teaching.regrade.skipped", { frozen: plan.skipped.frozen, unchanged: plan.skipped.unchanged, stale: plan.skipped.stale })}
      </p>
      <div className="table-scroll">
        <table className="diff regrade-diff">
          <caption>{t("teaching.regrade.difference")}</caption>
          <thead>
            <tr>
              <th scope="col">{t("teaching.regrade.learner")}</th>
              <th scope="col">{t("teaching.regrade.before")}</th>
              <th scope="col">{t("teaching.regrade.after")}</th>
            </tr>
          </thead>
          <tbody>
            {plan.items.map((item) => (
              <tr key={item.n} data-skipped={item.skipped ?? ""}>
                <th scope="row">{item.learner}{item.attemptNo === undefined ? null : <span className="muted"> · {t("learning.attempt", { n: item.attemptNo })}</span>}</th>
                <td className="old">{item.old === undefined ? "—" : t("learning.score", { points: points(texts, item.old), max: item.maxPoints })}</td>
                <td className="new">
                  {item.skipped !== undefined ? labelOf(texts, "teaching.skipped", item.skipped)
                    : item.new === undefined ? t("teaching.regrade.excused") : t("learning.score", { points: points(texts, item.new), max: item.maxPoints })}
                  {item.applied ? <> · {t("teaching.regrade.applied")}</> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {plan.status === "ready" ? (
        <>
          <p className="hint">{t("teaching.regrade.expires", { date: texts.date(plan.expiresAt) })}</p>
          <p>
            <button type="button" className="button" disabled={!hydrated || busy}
              onClick={() => void run((api) => api["learning.regrade_plans.commit"]({ path: { course: data.course.courseUuid, plan: plan.uuid }, payload: { requestUuid: requestUuid() } }))}>
              {t("teaching.regrade.commit")}
            </button>
          </p>
        </>
      ) : null}
      {plan.committedAt === undefined ? null : <p className="notice">{t("teaching.regrade.committed", { date: texts.date(plan.committedAt) })}</p>}
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      <p><a href={href(`/teaching/${data.course.courseUuid}/regrades`, language)}>{t("teaching.regrade.another")}</a></p>
    </section>
  )
}

/** Regrade plans: a rule applied to a step's submissions, shown as its dry-run difference before it is committed. */
export default function TeachingRegradePage({ data, texts }: Props) {
  const { t } = texts
  return (
    <div>
      <TeachingHeader course={data.course} texts={texts} current="regrades">{t("teaching.regrade.title")}: {data.course.courseTitle}</TeachingHeader>
      {data.plan === undefined ? <NewPlan data={data} texts={texts} /> : <Plan data={data} plan={data.plan} texts={texts} />}
    </div>
  )
}
