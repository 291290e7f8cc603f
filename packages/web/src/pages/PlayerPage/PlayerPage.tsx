import { memo, useCallback, useEffect, useRef, useState } from "react"
import { flushSync } from "react-dom"
import { href } from "../../components/Layout.js"
import { Appeal } from "../../components/Appeal.js"
import { appealable, completionOf, labelOf, points, Progress, StepState, stepDataOf, submissionOf, treeWithProgress } from "../../components/learning.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { LearnerAppealView, OutlineItem, StepData, SubmissionView } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data }: Pick<PageProps<"player">, "data">) => data.step === undefined ? data.courseTitle : `${data.step.title} · ${data.courseTitle}`

type Texts = PageProps<"player">["texts"]

/** How often a submission waiting for its check or review is read again: at most every 2 s (README.md, pages). */
const pollMs = 2000
/** How long typing pauses before the draft is saved. */
const draftDelayMs = 800

const pending = new Set(["submitted", "checking", "awaiting_review"])

/** One attempt: its state, the effective score, and every score layer with what made it. */
const Attempt = ({ submission, texts, latest, appeals }: {
  readonly submission: SubmissionView
  readonly texts: Texts
  readonly latest: boolean
  /** The latest attempt's appeals, when it has a released grade to appeal. */
  readonly appeals?: ReadonlyArray<LearnerAppealView> | undefined
}) => {
  const { t } = texts
  const score = submission.score
  return (
    <li className="attempt" data-uuid={submission.uuid}>
      <h4>{t("learning.attempt", { n: submission.attemptNo })}</h4>
      <p className="card__meta">
        <span className={`tag submission-status submission-status--${submission.status}`}>{labelOf(texts, "learning.submissionStatus", submission.status)}</span>
        <time dateTime={submission.submittedAt}>{texts.date(submission.submittedAt)}</time>
        {submission.late ? <span className="tag tag--muted">{t("learning.late")}</span> : null}
      </p>
      {latest && pending.has(submission.status) ? <p className="muted">{t(`learning.waiting.${submission.status}` as "learning.waiting.submitted")}</p> : null}
      {submission.reply === "" ? null : <blockquote className="reply">{submission.reply}</blockquote>}
      {score === undefined ? null : (
        <div className="score">
          <p className="score__total">
            {t("learning.score", { points: points(texts, score.points), max: score.maxPoints })}{" "}
            <span className={score.passed ? "tag tag--passed" : "tag tag--failed"}>{t(score.passed ? "learning.passed" : "learning.notPassed")}</span>
          </p>
          {score.feedback === "" ? null : <p><strong>{t("learning.feedback")}</strong> {score.feedback}</p>}
        </div>
      )}
      {submission.layers.length === 0 ? null : (
        <details className="layers" open={submission.layers.length > 1}>
          <summary>{t("learning.layers")}</summary>
          <p className="hint">{t("learning.layers.hint")}</p>
          <ol>
            {submission.layers.map((layer, index) => (
              <li key={`${layer.kind}-${index}`} className={layer.revoked ? "layer layer--revoked" : "layer"}>
                <strong>{labelOf(texts, "learning.layer", layer.kind)}</strong>
                {": "}{t("learning.score", { points: points(texts, layer.points), max: layer.maxPoints })}
                {" · "}{labelOf(texts, "learning.verdict", layer.verdict)}
                {layer.revoked ? <> · <em>{t("learning.layer.revoked")}</em></> : null}
                {layer.late ? <> · {t("learning.late")}</> : null}
                <br /><span className="muted">{labelOf(texts, "learning.layerWhy", layer.kind)}</span>
                {layer.feedback === "" ? null : <><br />{t("learning.feedback")} {layer.feedback}</>}
              </li>
            ))}
          </ol>
        </details>
      )}
      {latest && appeals !== undefined && score !== undefined && !pending.has(submission.status) && submission.layers.some((layer) => layer.kind === "review")
        ? <Appeal submission={submission.uuid} appeals={appeals} maxPoints={score.maxPoints} texts={texts} />
        : null}
    </li>
  )
}

/** The reply editor of a quiz or an assignment: the draft saved as one types (a draft changed elsewhere is explained, not lost), submit. */
const Reply = ({ step, enrollment, texts, onSubmitted }: {
  readonly step: StepData
  readonly enrollment: string
  readonly texts: Texts
  readonly onSubmitted: (submission: SubmissionView) => void
}) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const quiz = step.stepType === "quiz"
  const field = useRef<HTMLTextAreaElement & HTMLInputElement>(null)
  const revision = useRef<number | undefined>(step.draft?.revision)
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)
  const [draftState, setDraftState] = useState<"idle" | "saving" | "saved" | "failed">("idle")
  const [stale, setStale] = useState<{ readonly reply: string; readonly revision: number; readonly updatedAt: string } | undefined>(undefined)
  const path = { enrollment, node: step.nodeKey }

  const saveDraft = async (force = false) => {
    const reply = field.current?.value ?? ""
    const { api } = await import("../../browserApi.js")
    setDraftState("saving")
    try {
      const saved = await api["learning.drafts.save"]({
        path,
        payload: { requestUuid: requestUuid(), reply, ...(revision.current === undefined ? {} : { expectedRevision: revision.current }) }
      })
      revision.current = saved.revision
      setDraftState("saved")
      if (force) setStale(undefined)
    } catch (error) {
      // Saved elsewhere since (another tab or device): read the newer draft and let the learner choose; this text stays.
      if ((error as { readonly code?: string }).code === "revision_conflict") {
        try {
          const now = await api["learning.steps.get"]({ path })
          const draft = now.draft
          if (draft !== undefined) {
            setStale({ reply: typeof draft.reply === "string" ? draft.reply : JSON.stringify(draft.reply), revision: draft.revision, updatedAt: new Date(draft.updatedAt as unknown as string).toISOString() })
            setDraftState("idle")
            return
          }
        } catch {
          // Falls through to the failure below.
        }
      }
      setDraftState("failed")
    }
  }
  const typed = () => {
    if (stale !== undefined) return
    clearTimeout(timer.current)
    timer.current = setTimeout(() => void saveDraft(), draftDelayMs)
  }
  useEffect(() => () => clearTimeout(timer.current), [])

  const submit = () => {
    clearTimeout(timer.current)
    const reply = field.current?.value.trim() ?? ""
    if (reply === "") {
      field.current?.focus()
      return
    }
    void run(
      (api) => api["learning.submissions.create"]({ path, payload: { requestUuid: requestUuid(), reply } }),
      (submission) => {
        revision.current = undefined
        setDraftState("idle")
        if (field.current !== null) field.current.value = ""
        onSubmitted(submissionOf(submission))
      }
    )
  }
  const id = `reply-${step.nodeKey}`
  return (
    <div className="stack reply-form">
      <label htmlFor={id}>{t(quiz ? "learning.answer" : "learning.reply")}</label>
      {quiz
        ? <input id={id} ref={field} name="reply" maxLength={1000} defaultValue={step.draft?.reply ?? ""} onInput={typed} autoComplete="off" />
        : <textarea id={id} ref={field} name="reply" rows={8} maxLength={20000} defaultValue={step.draft?.reply ?? ""} onInput={typed} />}
      <p className="hint" aria-live="polite" id="draft-state">
        {draftState === "saving" ? t("learning.draft.saving") : draftState === "saved" ? t("learning.draft.saved") : draftState === "failed" ? t("learning.draft.failed") : step.draft === undefined ? "" : t("learning.draft.from", { date: texts.date(step.draft.updatedAt) })}
      </p>
      {stale === undefined ? null : (
        <div className="panel stale" role="alert">
          <p>{t("learning.draft.stale", { date: texts.date(stale.updatedAt) })}</p>
          <blockquote className="reply">{stale.reply}</blockquote>
          <p className="actions">
            <button type="button" className="button button--secondary" onClick={() => {
              revision.current = stale.revision
              void saveDraft(true)
            }}>{t("learning.draft.keepMine")}</button>
            <button type="button" className="button button--secondary" onClick={() => {
              if (field.current !== null) field.current.value = stale.reply
              revision.current = stale.revision
              setStale(undefined)
              setDraftState("idle")
            }}>{t("learning.draft.takeSaved")}</button>
          </p>
        </div>
      )}
      <p>
        <button type="button" className="button" disabled={!hydrated || busy} onClick={submit}>{t(quiz ? "learning.submitAnswer" : "learning.submitWork")}</button>
      </p>
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </div>
  )
}

/**
 * A step read in the browser for a switch in the tree (the reads the server's loader makes for the
 * open step, packages/web/src/server/learning.ts, mapped by the same function), and beside it, not
 * waited for, the tree's states and the progress as they are now (a step done since the page was
 * loaded shows so).
 */
const readStep = async (enrollment: string, node: string, outline: ReadonlyArray<OutlineItem>) => {
  const { api } = await import("../../browserApi.js")
  const path = { enrollment, node }
  const progress = Promise.all([
    api["learning.calendar.get"]({ path: { enrollment }, urlParams: {} }),
    api["learning.completion.get"]({ path: { enrollment } })
  ]).then(([calendar, completion]) => ({ tree: treeWithProgress(outline, calendar), completion: completionOf(completion) }))
  // Not left unhandled while the step is read; a failed read keeps the tree as it was.
  progress.catch(() => undefined)
  const [step, history] = await Promise.all([
    api["learning.steps.get"]({ path }),
    api["learning.submissions.history"]({ path, urlParams: { limit: 20 } })
  ])
  const latest = history.items[0]
  // The latest attempt's appeals, when it has a reviewer's grade to appeal (a failed read leaves them out, not the step).
  const appeals = latest === undefined || !appealable(latest) ? undefined
    : await api["learning.appeals.list_for_submission"]({ path: { submission: latest.uuid } }).catch(() => undefined)
  return { step: stepDataOf(step, history.items, appeals), progress }
}

/** The open step: its content, dates and attempts, the reply, and every attempt with its score (refreshed while one waits). */
const Step = ({ step, enrollment, texts, canStudy }: { readonly step: StepData; readonly enrollment: string; readonly texts: Texts; readonly canStudy: boolean }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [submissions, setSubmissions] = useState<ReadonlyArray<SubmissionView>>(step.submissions)
  const [attempts, setAttempts] = useState(step.attempts)
  const latest = submissions[0]
  const waiting = latest !== undefined && pending.has(latest.status) ? latest.uuid : undefined

  // A submission waiting for its check or review: read it again every 2 s until it is graded.
  useEffect(() => {
    if (waiting === undefined) return
    let stopped = false
    const poll = async () => {
      const { api } = await import("../../browserApi.js")
      while (!stopped) {
        await new Promise((resolve) => setTimeout(resolve, pollMs))
        if (stopped || document.hidden) continue
        try {
          const now = submissionOf(await api["learning.submissions.get"]({ path: { submission: waiting } }))
          if (stopped) return
          setSubmissions((all) => all.map((s) => s.uuid === now.uuid ? now : s))
          if (!pending.has(now.status)) return
        } catch {
          // A failed read is tried again at the next tick.
        }
      }
    }
    void poll()
    return () => {
      stopped = true
    }
  }, [waiting])

  const graded = step.stepType === "quiz" || step.stepType === "assignment" || step.stepType === "code"
  const done = step.status === "completed"
  const outOfAttempts = attempts.left !== undefined && attempts.left <= 0
  return (
    <section className="step panel" aria-labelledby="step-title">
      <p className="card__meta">
        <span>{labelOf(texts, "learning.stepType", step.stepType ?? "text")}</span>
        <StepState texts={texts} status={step.status} />
        {step.dueAt === undefined ? null : <span>{t("learning.dueOn", { date: texts.date(step.dueAt) })}</span>}
      </p>
      <h2 id="step-title" tabIndex={-1}>{step.title}</h2>
      {step.status === "locked"
        ? <p>{step.unlockAt === undefined ? t("learning.locked") : t("learning.lockedUntil", { date: texts.date(step.unlockAt) })}</p>
        : step.body === undefined || step.body === "" ? null : <div className="step__body">{step.body}</div>}
      {graded && step.grading !== undefined ? (
        <ul className="plain step__facts">
          <li>{t("learning.maxPoints", { n: step.grading.maxPoints })}{step.grading.passThreshold === undefined ? "" : ` · ${t("learning.passAt", { n: step.grading.passThreshold })}`}</li>
          <li>{labelOf(texts, "learning.checkedBy", step.grading.review !== "none" ? "review" : step.grading.checkedBy === "external" ? "external" : "auto")}</li>
          <li id="attempts">
            {attempts.allowed === undefined
              ? t("learning.attempts.unlimited", { used: attempts.used })
              : t("learning.attempts.left", { left: attempts.left ?? 0, allowed: attempts.allowed })}
          </li>
        </ul>
      ) : null}
      {!canStudy || step.status === "locked" ? null : graded ? (
        outOfAttempts ? <p>{t("learning.attempts.none")}</p> : (
          <Reply
            step={step}
            enrollment={enrollment}
            texts={texts}
            onSubmitted={(submission) => {
              setSubmissions((all) => [submission, ...all])
              setAttempts((now) => ({ ...now, used: now.used + 1, ...(now.left === undefined ? {} : { left: Math.max(0, now.left - 1) }) }))
            }}
          />
        )
      ) : done ? <p className="notice">{t("learning.doneAlready")}</p> : (
        <p>
          <button type="button" className="button" disabled={!hydrated || busy} onClick={() => void run((api) =>
            api["learning.steps.acknowledge"]({ path: { enrollment, node: step.nodeKey }, payload: { requestUuid: requestUuid() } }))}>
            {t("learning.markDone")}
          </button>
          <span role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</span>
        </p>
      )}
      {submissions.length === 0 ? null : (
        <section aria-labelledby="attempts-title">
          <h3 id="attempts-title">{t("learning.attempts")}</h3>
          <ol className="attempts" aria-live="polite">
            {submissions.map((submission, index) => <Attempt key={submission.uuid} submission={submission} texts={texts} latest={index === 0} appeals={index === 0 && submission.uuid === step.submissions[0]?.uuid ? step.appeals : undefined} />)}
          </ol>
        </section>
      )}
    </section>
  )
}

/** The learner's own review of the course: rating and text, saved once the course allows it. */
const CourseReview = ({ data, texts }: { readonly data: PageProps<"player">["data"]; readonly texts: Texts }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [saved, setSaved] = useState(false)
  if (!data.review.eligible && data.review.rating === undefined) return null
  const save = () => {
    const rating = Number((document.querySelector("input[name=course-rating]:checked") as HTMLInputElement | null)?.value ?? 5)
    const text = (document.getElementById("course-review-text") as HTMLTextAreaElement | null)?.value.trim() ?? ""
    void run(
      (api) => api["learning.course_reviews.save"]({
        path: { enrollment: data.enrollment.uuid },
        payload: { requestUuid: requestUuid(), rating, text, ...(data.review.revision === undefined ? {} : { expectedRevision: data.review.revision }) }
      }),
      () => setSaved(true)
    )
  }
  return (
    <fieldset className="stack">
      <legend>{t("learning.review.title")}</legend>
      <div className="rating" role="radiogroup" aria-label={t("deals.rating")}>
        {[1, 2, 3, 4, 5].map((n) => (
          <label key={n}><input type="radio" name="course-rating" value={n} defaultChecked={n === (data.review.rating ?? 5)} /> {t("deals.stars", { n })}</label>
        ))}
      </div>
      <label htmlFor="course-review-text">{t("learning.review.text")}</label>
      <textarea id="course-review-text" rows={3} maxLength={5000} defaultValue={data.review.text ?? ""} />
      <p><button type="button" className="button" disabled={!hydrated || busy} onClick={save}>{t("learning.review.save")}</button></p>
      <p className="notice" aria-live="polite">{saved ? t("learning.review.saved") : ""}</p>
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </fieldset>
  )
}

/** A step in the player's tree: an ordinary link the page opens in place once its script runs (a click with a modifier stays a link). */
const StepLink = memo(({ node, url, current, hydrated, texts, onOpen }: {
  readonly node: OutlineItem
  readonly url: string
  readonly current: boolean
  readonly hydrated: boolean
  readonly texts: Texts
  readonly onOpen: (nodeKey: string, url: string) => void
}) => (
  <li>
    <a href={url} aria-current={current ? "step" : undefined} onClick={(event) => {
      if (!hydrated || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
      event.preventDefault()
      onOpen(node.nodeKey, url)
    }}>{node.title}</a>
    <StepState texts={texts} status={node.status ?? "locked"} />
  </li>
))

/** The course player: the module and step tree with states, the open step, progress and completion, leaving and coming back. */
export default function PlayerPage({ data, texts }: PageProps<"player">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const { enrollment } = data
  const base = `/learning/${enrollment.uuid}`
  // The open step, the tree's states and the progress: from the page's data, then from each switch.
  const [view, setView] = useState({ step: data.step, tree: data.tree, completion: data.completion })
  const { step, tree, completion } = view
  const modules = tree.filter((node) => node.kind === "module")
  const stepsOf = (parent: string | undefined) => tree.filter((node) => node.kind === "step" && node.parentKey === parent)
  const loose = tree.filter((node) => node.kind === "step" && (node.parentKey === undefined || !modules.some((m) => m.nodeKey === node.parentKey)))
  const canStudy = enrollment.status === "active" && enrollment.startedAt !== undefined
  const command = (operation: "learning.enrollments.start" | "learning.enrollments.restore") =>
    void run((api) => api[operation]({ path: { enrollment: enrollment.uuid }, payload: { requestUuid: requestUuid(), expectedRevision: enrollment.revision } }))
  const withdraw = () => {
    const reason = (document.getElementById("withdraw-reason") as HTMLInputElement | null)?.value.trim() ?? ""
    void run((api) => api["learning.enrollments.withdraw"]({
      path: { enrollment: enrollment.uuid },
      payload: { requestUuid: requestUuid(), expectedRevision: enrollment.revision, ...(reason === "" ? {} : { reason }) }
    }))
  }
  // A step chosen in the tree opens in place: its reads made from the browser, the page's address
  // pushed (back and forward open their step again), focus on the step's title. A click with a
  // modifier, or before the script runs, is an ordinary link (the server renders the step).
  const asked = useRef<string | undefined>(undefined)
  const open = async (nodeKey: string, url: string, push: boolean) => {
    asked.current = nodeKey
    try {
      const next = await readStep(enrollment.uuid, nodeKey, tree)
      if (asked.current !== nodeKey) return
      const before = step === undefined ? data.courseTitle : title({ data: { ...data, step } })
      flushSync(() => setView((now) => ({ ...now, step: next.step })))
      if (push) history.pushState({ step: nodeKey }, "", url)
      document.title = document.title.replace(before, title({ data: { ...data, step: next.step } }))
      document.getElementById("step-title")?.focus()
      next.progress.then((progress) => setView((now) => ({ ...now, ...progress })), () => undefined)
    } catch {
      location.assign(url)
    }
  }
  const latestOpen = useRef(open)
  latestOpen.current = open
  useEffect(() => {
    // The browser's client loaded ahead, so the first switch does not wait for it.
    void import("../../browserApi.js")
    const back = () => {
      const node = new URLSearchParams(location.search).get("step")
      if (node === null) location.reload()
      else void latestOpen.current(node, location.href, false)
    }
    addEventListener("popstate", back)
    return () => removeEventListener("popstate", back)
  }, [])
  // One stable handler for every link, so a switch re-renders only the two links whose state changed.
  const openLink = useCallback((nodeKey: string, url: string) => void latestOpen.current(nodeKey, url, true), [])
  const stepLink = (node: OutlineItem) => (
    <StepLink key={node.nodeKey} node={node} url={href(base, language, { step: node.nodeKey })} current={step?.nodeKey === node.nodeKey}
      hydrated={hydrated} texts={texts} onOpen={openLink} />
  )
  return (
    <div className="player">
      <p className="card__meta">
        <a href={href("/learning", language)}>{t("learning.mine.title")}</a>
        <a href={href(`${base}/calendar`, language)}>{t("learning.calendar")}</a>
        <a href={href(`/courses/${enrollment.courseUuid}`, language)}>{t("learning.coursePage")}</a>
      </p>
      <h1>{data.courseTitle}</h1>
      <div className="player__status">
        <span className="tag">{labelOf(texts, "learning.enrollmentStatus", enrollment.status)}</span>
        <Progress texts={texts} percent={completion.percent} label={t("learning.progressOf", { course: data.courseTitle })} />
        <span>{t("learning.requiredDone", { done: completion.completedRequiredSteps, total: completion.requiredSteps })}</span>
      </div>
      {completion.completedAt !== undefined || enrollment.completedAt !== undefined
        ? <p className="notice completion">{t("learning.completedOn", { date: texts.date((completion.completedAt ?? enrollment.completedAt)!) })}</p>
        : completion.criteriaMet ? <p className="notice completion">{t("learning.criteriaMet")}</p> : null}
      {enrollment.status === "active" && enrollment.startedAt === undefined ? (
        <p className="panel">{t("learning.notStarted")} <button type="button" className="button" disabled={!hydrated || busy} onClick={() => command("learning.enrollments.start")}>{t("learning.start")}</button></p>
      ) : null}
      {enrollment.status === "withdrawal_requested" || enrollment.status === "withdrawn" ? (
        <p className="panel">
          {enrollment.restoreUntil === undefined ? t("learning.withdrawn") : t("learning.withdrawn.until", { date: texts.date(enrollment.restoreUntil) })}{" "}
          {enrollment.restoreUntil === undefined ? null : <button type="button" className="button" disabled={!hydrated || busy} onClick={() => command("learning.enrollments.restore")}>{t("learning.restore")}</button>}
        </p>
      ) : null}
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      <div className="player__layout">
        <nav className="player__tree panel" aria-label={t("learning.tree")}>
          {modules.map((module) => (
            <div key={module.nodeKey}>
              <h2 className="player__module">{module.title}</h2>
              <ol className="player__steps">{stepsOf(module.nodeKey).map(stepLink)}</ol>
            </div>
          ))}
          {loose.length === 0 ? null : <ol className="player__steps">{loose.map(stepLink)}</ol>}
        </nav>
        <div className="player__main">
          {step === undefined ? <p>{t("learning.noSteps")}</p> : <Step key={step.nodeKey} step={step} enrollment={enrollment.uuid} texts={texts} canStudy={canStudy} />}
          <CourseReview data={data} texts={texts} />
          {enrollment.status === "active" || enrollment.status === "paused" ? (
            <details className="withdraw">
              <summary>{t("learning.withdraw")}</summary>
              <div className="stack">
                <p>{t("learning.withdraw.hint")}</p>
                <label htmlFor="withdraw-reason">{t("learning.withdraw.reason")}</label>
                <input id="withdraw-reason" maxLength={1000} />
                <p><button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={withdraw}>{t("learning.withdraw")}</button></p>
              </div>
            </details>
          ) : null}
        </div>
      </div>
    </div>
  )
}
