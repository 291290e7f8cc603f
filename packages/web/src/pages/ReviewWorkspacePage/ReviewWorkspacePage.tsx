import { useRef, useState } from "react"
import { href } from "../../components/Layout.js"
import { labelOf, points } from "../../components/learning.js"
import { fieldValue, may, TeachingHeader } from "../../components/teaching.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { ReplyView, ReviewAssignmentView, ReviewWorkspaceView } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"reviewWorkspace">, "data" | "texts">) => `${texts.t("teaching.workspace.title")} · ${data.step.title}`

type Props = PageProps<"reviewWorkspace">
type Texts = Props["texts"]
type RubricRow = { readonly criterion: string; readonly points: string; readonly comment: string }

/** How long typing pauses before the review draft is saved. */
const draftDelayMs = 800

const issueKinds = ["plagiarism", "unreadable", "checker_disagrees", "abuse", "other"] as const

const Reply = ({ reply, texts }: { readonly reply: ReplyView; readonly texts: Texts }) => (
  <>
    {reply.text === "" ? <p className="muted">{texts.t("teaching.workspace.emptyReply")}</p> : <blockquote className="reply">{reply.text}</blockquote>}
    {reply.files.length === 0 ? null : (
      <ul className="attachments">
        {reply.files.map((file, index) => <li key={index}>{file.url === undefined ? file.name : <a href={file.url}>{file.name}</a>}</li>)}
      </ul>
    )}
  </>
)

/**
 * The review form of the holder: rubric rows, points, comment and outcome; the draft saved as one
 * types (learning.reviews.draft, at its revision), then decide (learning.reviews.decide).
 */
const ReviewForm = ({ data, texts, assignment, workspace }: {
  readonly data: Props["data"]
  readonly texts: Texts
  readonly assignment: ReviewAssignmentView
  readonly workspace: ReviewWorkspaceView | undefined
}) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const saved = workspace?.draft ?? assignment.decision
  const [rubric, setRubric] = useState<ReadonlyArray<RubricRow>>(
    (saved?.rubric.length ?? 0) > 0
      ? saved!.rubric.map((row) => ({ criterion: row.criterion, points: String(row.points), comment: row.comment ?? "" }))
      : [{ criterion: "", points: "", comment: "" }]
  )
  const [comment, setComment] = useState(saved?.comment ?? "")
  const [total, setTotal] = useState(saved?.points === undefined ? "" : String(saved.points))
  const [draftState, setDraftState] = useState<"idle" | "saving" | "saved" | "stale" | "failed">(workspace?.draft === undefined ? "idle" : "saved")
  const revision = useRef<number | undefined>(workspace?.draft?.revision)
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)
  const maxPoints = data.step.maxPoints
  const rows = (list: ReadonlyArray<RubricRow>) =>
    list.filter((row) => row.criterion.trim() !== "").map((row) => ({
      criterion: row.criterion.trim(), points: Number(row.points) || 0, ...(row.comment.trim() === "" ? {} : { comment: row.comment.trim() })
    }))
  const sum = rows(rubric).reduce((n, row) => n + row.points, 0)
  const effective = total.trim() === "" ? sum : Number(total)

  // "Saved" means what is on the screen is saved: the state turns to "saving" at the first keystroke
  // (not when the pause ends), the saves run one after another (each at the revision the one before
  // it answered, so two never race to a stale revision), and only the save of the latest edit says
  // "saved".
  const edits = useRef(0)
  const queue = useRef<Promise<void>>(Promise.resolve())
  const saveDraft = (next: { readonly rubric: ReadonlyArray<RubricRow>; readonly comment: string; readonly total: string }) => {
    if (timer.current !== undefined) clearTimeout(timer.current)
    const edit = ++edits.current
    setDraftState("saving")
    timer.current = setTimeout(() => {
      queue.current = queue.current.then(() => import("../../browserApi.js").then(async ({ api, messageOf }) => {
        try {
          const draft = await api["learning.reviews.draft"]({
            path: { submission: data.submissionUuid },
            payload: {
              requestUuid: requestUuid(),
              ...(revision.current === undefined ? {} : { expectedRevision: revision.current }),
              rubric: rows(next.rubric), comment: next.comment,
              ...(next.total.trim() === "" || !Number.isFinite(Number(next.total)) ? {} : { points: Number(next.total) })
            }
          })
          revision.current = draft.revision
          if (edit === edits.current) setDraftState("saved")
        } catch (error) {
          setDraftState(messageOf(error) === "error.stale" ? "stale" : "failed")
        }
      }))
    }, draftDelayMs)
  }
  const change = (next: { readonly rubric?: ReadonlyArray<RubricRow>; readonly comment?: string; readonly total?: string }) => {
    const state = { rubric: next.rubric ?? rubric, comment: next.comment ?? comment, total: next.total ?? total }
    if (next.rubric !== undefined) setRubric(next.rubric)
    if (next.comment !== undefined) setComment(next.comment)
    if (next.total !== undefined) setTotal(next.total)
    saveDraft(state)
  }
  const setRow = (index: number, patch: Partial<RubricRow>) => change({ rubric: rubric.map((row, i) => i === index ? { ...row, ...patch } : row) })

  const decide = () => {
    const outcome = (document.querySelector<HTMLInputElement>("input[name=outcome]:checked")?.value ?? "") as "accept" | "revise" | "fail" | ""
    if (outcome === "") {
      document.querySelector<HTMLInputElement>("input[name=outcome]")?.focus()
      return
    }
    if (!Number.isFinite(effective) || effective < 0 || (maxPoints !== undefined && effective > maxPoints)) {
      document.getElementById("review-points")?.focus()
      return
    }
    if (timer.current !== undefined) clearTimeout(timer.current)
    void run((api) => api["learning.reviews.decide"]({
      path: { submission: data.submissionUuid },
      payload: { requestUuid: requestUuid(), expectedRevision: assignment.revision, outcome, points: effective, rubric: rows(rubric), comment: comment.trim() }
    }))
  }

  return (
    <section className="panel review-form" aria-labelledby="review-form">
      <h2 id="review-form">{t("teaching.workspace.yourReview")}</h2>
      <fieldset className="stack">
        <legend>{t("teaching.workspace.rubric")}</legend>
        {rubric.map((row, index) => (
          <div key={index} className="rubric-row">
            <div className="field">
              <label htmlFor={`criterion-${index}`}>{t("teaching.workspace.criterion", { n: index + 1 })}</label>
              <input id={`criterion-${index}`} value={row.criterion} maxLength={200} onChange={(event) => setRow(index, { criterion: event.target.value })} />
            </div>
            <div className="field">
              <label htmlFor={`criterion-points-${index}`}>{t("teaching.workspace.criterionPoints", { n: index + 1 })}</label>
              <input id={`criterion-points-${index}`} type="number" min={0} max={1000} step="any" inputMode="decimal" value={row.points}
                onChange={(event) => setRow(index, { points: event.target.value })} />
            </div>
            <div className="field">
              <label htmlFor={`criterion-comment-${index}`}>{t("teaching.workspace.criterionComment", { n: index + 1 })}</label>
              <input id={`criterion-comment-${index}`} value={row.comment} maxLength={2000} onChange={(event) => setRow(index, { comment: event.target.value })} />
            </div>
            {rubric.length > 1 ? (
              <button type="button" className="link-button" onClick={() => change({ rubric: rubric.filter((_, i) => i !== index) })}>
                {t("teaching.workspace.removeCriterion", { n: index + 1 })}
              </button>
            ) : null}
          </div>
        ))}
        <p>
          <button type="button" className="button button--secondary button--small" disabled={rubric.length >= 50}
            onClick={() => change({ rubric: [...rubric, { criterion: "", points: "", comment: "" }] })}>{t("teaching.workspace.addCriterion")}</button>
        </p>
      </fieldset>
      <div className="field">
        <label htmlFor="review-points">{t("teaching.workspace.points")}</label>
        <input id="review-points" type="number" min={0} max={maxPoints ?? 1000} step="any" inputMode="decimal" value={total} placeholder={String(sum)}
          aria-describedby="review-points-hint" onChange={(event) => change({ total: event.target.value })} />
        <p id="review-points-hint" className="hint">
          {maxPoints === undefined ? t("teaching.workspace.pointsHintFree") : t("teaching.workspace.pointsHint", { max: maxPoints })}
        </p>
      </div>
      <div className="field">
        <label htmlFor="review-comment">{t("teaching.workspace.comment")}</label>
        <textarea id="review-comment" rows={5} maxLength={10000} value={comment} onChange={(event) => change({ comment: event.target.value })} />
      </div>
      <p id="review-draft" role="status" aria-live="polite" className={draftState === "saved" || draftState === "saving" ? "hint" : "status"}>
        {draftState === "idle" ? "" : t(`teaching.workspace.draft.${draftState}` as "teaching.workspace.draft.saved")}
      </p>
      <fieldset>
        <legend>{t("teaching.workspace.outcome")}</legend>
        {(["accept", "revise", "fail"] as const).map((outcome) => (
          <label key={outcome} className="check">
            <input type="radio" name="outcome" value={outcome} defaultChecked={assignment.decision?.outcome === outcome} />
            {labelOf(texts, "teaching.outcome", outcome)}
          </label>
        ))}
      </fieldset>
      <p>
        <button type="button" className="button" disabled={!hydrated || busy} onClick={decide}>{t("teaching.workspace.decide")}</button>
      </p>
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </section>
  )
}

/** Release, hand over, flag: the moves on an assignment besides the review itself, each offered only to who may make it. */
const AssignmentActions = ({ data, texts, assignment, holder, instructor }: {
  readonly data: Props["data"]
  readonly texts: Texts
  readonly assignment: ReviewAssignmentView
  readonly holder: boolean
  readonly instructor: boolean
}) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const submission = data.submissionUuid
  const releasable = assignment.status === "decided" && assignment.decision?.final === true && may(data.course, "grades_release")
  const open = assignment.status === "claimed" || assignment.status === "decided" || assignment.status === "pooled"
  const reassign = () => {
    const to = fieldValue("reassign-to")
    const reason = fieldValue("reassign-reason")
    if (reason === "") return document.getElementById("reassign-reason")?.focus()
    void run((api) => api["learning.reviews.reassign"]({
      path: { submission },
      payload: { requestUuid: requestUuid(), expectedRevision: assignment.revision, assignmentUuid: assignment.uuid, reason, ...(to === "" ? { pool: true as const } : { toProfileUuid: to }) }
    }))
  }
  const report = () => {
    const kind = fieldValue("issue-kind") as typeof issueKinds[number]
    const note = fieldValue("issue-note")
    if (note === "") return document.getElementById("issue-note")?.focus()
    void run((api) => api["learning.reviews.report_issue"]({ path: { submission }, payload: { requestUuid: requestUuid(), kind, note } }))
  }
  if (!releasable && !(open && (holder || instructor))) return null
  return (
    <section className="panel" aria-labelledby="assignment-actions">
      <h2 id="assignment-actions">{t("teaching.workspace.actions")}</h2>
      {releasable ? (
        <p>
          <button type="button" className="button" disabled={!hydrated || busy}
            onClick={() => void run((api) => api["learning.reviews.release"]({ path: { submission }, payload: { requestUuid: requestUuid(), expectedRevision: assignment.revision } }))}>
            {t("teaching.workspace.release")}
          </button>
          <span className="hint"> {t("teaching.workspace.releaseHint")}</span>
        </p>
      ) : null}
      {open && assignment.status !== "pooled" && (holder || instructor) ? (
        <details>
          <summary>{t("teaching.workspace.reassign")}</summary>
          <div className="stack">
            <label htmlFor="reassign-to">{t("teaching.workspace.reassignTo")}</label>
            <select id="reassign-to" defaultValue="">
              <option value="">{t("teaching.workspace.toPool")}</option>
              {data.reviewers.filter((r) => r.profileUuid !== assignment.reviewerProfileUuid).map((r) => <option key={r.profileUuid} value={r.profileUuid}>{r.name}</option>)}
            </select>
            <label htmlFor="reassign-reason">{t("teaching.workspace.reason")}</label>
            <textarea id="reassign-reason" rows={2} maxLength={2000} />
            <p><button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={reassign}>{t("teaching.workspace.reassignSend")}</button></p>
          </div>
        </details>
      ) : null}
      {open && holder && assignment.issue === undefined ? (
        <details>
          <summary>{t("teaching.workspace.report")}</summary>
          <div className="stack">
            <label htmlFor="issue-kind">{t("teaching.workspace.issueKind")}</label>
            <select id="issue-kind" defaultValue="other">
              {issueKinds.map((kind) => <option key={kind} value={kind}>{labelOf(texts, "teaching.issue", kind)}</option>)}
            </select>
            <label htmlFor="issue-note">{t("teaching.workspace.issueNote")}</label>
            <textarea id="issue-note" rows={2} maxLength={2000} />
            <p><button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={report}>{t("teaching.workspace.reportSend")}</button></p>
          </div>
        </details>
      ) : null}
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </section>
  )
}

/**
 * The review workspace of one submission: the step and the learner's reply with its files, the
 * earlier attempts and score layers, the assignment with its history; claim, the review form with
 * its draft, decide, release, reassign and report an issue, as the caller's rights allow.
 */
export default function ReviewWorkspacePage({ data, texts, state }: Props) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const me = state.session?.profileUuid
  const current = data.assignments.find((a) => a.kind === "staff" && (a.status === "pooled" || a.status === "claimed" || a.status === "decided")) ??
    data.assignments.find((a) => a.kind === "staff") ?? data.assignments[0]
  const holder = current !== undefined && me !== undefined && current.reviewerProfileUuid === me && current.status !== "pooled" && current.status !== "released"
  const instructor = data.course.roles.includes("owner") || data.course.roles.includes("instructor")
  const workspace = data.workspace
  const submission = data.submission
  return (
    <div className="workspace">
      <TeachingHeader course={data.course} texts={texts} current="reviews">{t("teaching.workspace.title")}: {data.step.title}</TeachingHeader>
      <p><a href={href(`/teaching/${data.course.courseUuid}/reviews`, language)}>{t("teaching.workspace.back")}</a></p>
      <dl className="facts facts--inline">
        <div><dt>{t("teaching.workspace.learner")}</dt><dd>{data.learner}</dd></div>
        <div><dt>{t("teaching.workspace.attempt")}</dt><dd>{t("teaching.workspace.attemptOn", { n: submission.attemptNo, date: texts.date(submission.submittedAt) })}</dd></div>
        <div><dt>{t("teaching.workspace.submissionStatus")}</dt><dd><span className="tag">{labelOf(texts, "learning.submissionStatus", submission.status)}</span>{submission.late ? <> <span className="tag tag--muted">{t("learning.late")}</span></> : null}</dd></div>
        {data.step.maxPoints === undefined ? null : <div><dt>{t("teaching.workspace.maxPoints")}</dt><dd>{data.step.maxPoints}</dd></div>}
      </dl>
      {data.step.body === undefined ? null : (
        <details className="panel">
          <summary>{t("teaching.workspace.task")}</summary>
          <p className="step__body">{data.step.body}</p>
        </details>
      )}
      <section aria-labelledby="reply">
        <h2 id="reply">{t("teaching.workspace.reply")}</h2>
        <Reply reply={workspace?.reply ?? { text: submission.reply, files: [] }} texts={texts} />
        {workspace?.checkerOutput === undefined ? null : (
          <p className="muted">{t("teaching.workspace.checker", { verdict: labelOf(texts, "learning.verdict", workspace.checkerOutput.verdict), points: points(texts, workspace.checkerOutput.points) })} {workspace.checkerOutput.feedback}</p>
        )}
      </section>
      {submission.layers.length === 0 ? null : (
        <section aria-labelledby="layers">
          <h2 id="layers">{t("teaching.workspace.layers")}</h2>
          <ol className="layers">
            {submission.layers.map((layer, index) => (
              <li key={index} className={layer.revoked ? "layer layer--revoked" : "layer"}>
                <strong>{labelOf(texts, "learning.layer", layer.kind)}</strong>: {t("learning.score", { points: points(texts, layer.points), max: layer.maxPoints })}
                {layer.revoked ? <> · <em>{t("learning.layer.revoked")}</em></> : null}
                {layer.feedback === "" ? null : <> · {layer.feedback}</>}
              </li>
            ))}
          </ol>
        </section>
      )}
      {workspace === undefined || workspace.earlierAttempts.length === 0 ? null : (
        <section aria-labelledby="earlier">
          <h2 id="earlier">{t("teaching.workspace.earlier")}</h2>
          <ul className="rows">
            {workspace.earlierAttempts.map((attempt) => (
              <li key={attempt.uuid} className="row row--stacked">
                <p className="card__meta">
                  <span>{t("learning.attempt", { n: attempt.attemptNo })}</span>
                  <time dateTime={attempt.submittedAt}>{texts.date(attempt.submittedAt)}</time>
                  <span className="tag">{labelOf(texts, "learning.submissionStatus", attempt.status)}</span>
                  {attempt.points === undefined ? null : <span>{t("teaching.pointsN", { n: points(texts, attempt.points) })}</span>}
                </p>
                <Reply reply={attempt.reply} texts={texts} />
              </li>
            ))}
          </ul>
        </section>
      )}
      {current === undefined ? <p>{t("teaching.workspace.noAssignment")}</p> : (
        <section aria-labelledby="assignment" className="assignment" data-status={current.status}>
          <h2 id="assignment">{t("teaching.workspace.assignment")}</h2>
          <p className="card__meta">
            <span className="tag assignment-status">{labelOf(texts, "teaching.assignmentStatus", current.status)}</span>
            {current.reviewerName === undefined ? null : <span>{current.reviewerProfileUuid === me ? t("teaching.reviews.heldByMe") : t("teaching.reviews.heldBy", { name: current.reviewerName })}</span>}
            {current.dueAt === undefined ? null : <span>{t("teaching.reviews.dueAt", { date: texts.date(current.dueAt) })}</span>}
          </p>
          {current.issue === undefined ? null : (
            <p className="notice">{t("teaching.workspace.issueReported", { kind: labelOf(texts, "teaching.issue", current.issue.kind) })} {current.issue.note}</p>
          )}
          {current.decision === undefined ? null : (
            <div className="decision">
              <p className="decision__summary">
                {t("teaching.workspace.decided", { outcome: labelOf(texts, "teaching.outcome", current.decision.outcome), points: points(texts, current.decision.points) })}
                {" "}<span className="tag">{t(current.decision.final ? "teaching.workspace.final" : "teaching.workspace.provisional")}</span>
              </p>
              {current.decision.comment === "" ? null : <blockquote>{current.decision.comment}</blockquote>}
            </div>
          )}
          {current.status === "pooled" && may(data.course, "review") ? (
            <p>
              <button type="button" className="button" disabled={!hydrated || busy}
                onClick={() => void run((api) => api["learning.reviews.claim"]({ path: { submission: data.submissionUuid }, payload: { requestUuid: requestUuid() } }))}>
                {t("teaching.reviews.claim")}
              </button>
              <span role="status" className="status"> {message === undefined ? "" : t(message)}</span>
            </p>
          ) : null}
          {current.history.length === 0 ? null : (
            <details className="history">
              <summary>{t("teaching.workspace.history")}</summary>
              <ol>
                {current.history.map((entry, index) => (
                  <li key={index}>
                    <time dateTime={entry.at}>{texts.date(entry.at)}</time>: {labelOf(texts, "teaching.historyAction", entry.action)}
                    {entry.by === undefined ? null : <> · {entry.by}</>}
                    {entry.to === undefined ? null : <> → {entry.to}</>}
                    {entry.reason === undefined ? null : <> · <span className="muted">{entry.reason}</span></>}
                  </li>
                ))}
              </ol>
            </details>
          )}
        </section>
      )}
      {current !== undefined && holder && (current.status === "claimed" || current.status === "decided" && current.decision?.final !== true) || current !== undefined && instructor && current.status === "decided" && current.decision?.final !== true
        ? <ReviewForm data={data} texts={texts} assignment={current} workspace={workspace} />
        : null}
      {current === undefined ? null : <AssignmentActions data={data} texts={texts} assignment={current} holder={holder} instructor={instructor} />}
    </div>
  )
}
