import type { FormEvent } from "react"
import { useHydrated } from "../hydrated.js"
import type { Texts } from "../i18n.js"
import type { CommentItem } from "../model.js"
import { href } from "./Layout.js"
import { requestUuid, useAction } from "./useAction.js"

type Comments = { readonly items: ReadonlyArray<CommentItem>; readonly cursor: string; readonly nextCursor?: string }

/** A comment's text field and its button: a new root comment, or an answer to one (comments.create / comments.reply). */
const CommentForm = ({ publicationUuid, parentUuid, texts }: { readonly publicationUuid: string; readonly parentUuid?: string; readonly texts: Texts }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const id = parentUuid === undefined ? "comment-body" : `reply-${parentUuid}`
  const send = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const body = String(new FormData(event.currentTarget).get("body") ?? "").trim()
    if (body === "") return
    void run((api) =>
      parentUuid === undefined
        ? api["comments.create"]({ path: { uuid: publicationUuid }, payload: { requestUuid: requestUuid(), body } })
        : api["comments.reply"]({ path: { uuid: publicationUuid, commentUuid: parentUuid }, payload: { requestUuid: requestUuid(), body } })
    )
  }
  return (
    <form onSubmit={send} className="stack">
      <label htmlFor={id}>{t(parentUuid === undefined ? "comments.write" : "comments.replyBody")}</label>
      <textarea id={id} name="body" rows={parentUuid === undefined ? 3 : 2} maxLength={5000} required />
      <p><button type="submit" className="button button--small" disabled={!hydrated || busy}>{t(parentUuid === undefined ? "comments.send" : "comments.sendReply")}</button></p>
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </form>
  )
}

/** One comment: who wrote it and when, its text (or that it was deleted), and what the visitor may do with it. */
const Comment = ({ comment, publicationUuid, signedIn, answers, texts }: {
  readonly comment: CommentItem
  readonly publicationUuid: string
  readonly signedIn: boolean
  readonly answers: ReadonlyArray<CommentItem>
  readonly texts: Texts
}) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const remove = () => void run((api) => api["comments.delete"]({ path: { uuid: publicationUuid, commentUuid: comment.uuid } }))
  return (
    <li className="comment" data-uuid={comment.uuid}>
      {comment.deleted ? <p className="muted">{t("comments.deleted")}</p> : (
        <>
          <p className="comment__head">
            {comment.authorProfileUuid === undefined
              ? <strong>{comment.authorName}</strong>
              : <a href={href(`/u/${comment.authorProfileUuid}`, language)}><strong>{comment.authorName}</strong></a>}
            {comment.isPublicationAuthor ? <span className="tag">{t("comments.byAuthor")}</span> : null}
            <time dateTime={comment.createdAt} className="muted">{texts.date(comment.createdAt)}</time>
          </p>
          <p className="comment__body">{comment.body}</p>
          {comment.canDelete
            ? (
              <p>
                <button type="button" className="link-button" disabled={!hydrated || busy} onClick={remove} aria-label={t("comments.deleteOf", { name: comment.authorName })}>
                  {t("comments.delete")}
                </button>
              </p>
            )
            : null}
          <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
        </>
      )}
      {answers.length === 0 ? null : (
        <ul className="comments comments--answers" aria-label={t("comments.answers", { n: answers.length })}>
          {answers.map((answer) => <Comment key={answer.uuid} comment={answer} publicationUuid={publicationUuid} signedIn={signedIn} answers={[]} texts={texts} />)}
        </ul>
      )}
      {comment.parentUuid === undefined && !comment.deleted && signedIn ? (
        <details className="comment__reply">
          <summary>{t("comments.reply")}</summary>
          <CommentForm publicationUuid={publicationUuid} parentUuid={comment.uuid} texts={texts} />
        </details>
      ) : null}
    </li>
  )
}

/**
 * A publication's comments: roots oldest first, each with its answers (one level, as
 * comments.reply allows), a page of roots at a time; the signed-in visitor writes, answers and
 * deletes what `canDelete` allows.
 */
export const CommentsSection = ({ publicationUuid, comments, signedIn, texts }: {
  readonly publicationUuid: string
  readonly comments: Comments
  readonly signedIn: boolean
  readonly texts: Texts
}) => {
  const { t, language } = texts
  const roots = comments.items.filter((comment) => comment.parentUuid === undefined)
  const answersOf = (uuid: string) => comments.items.filter((comment) => comment.parentUuid === uuid)
  return (
    <section aria-labelledby="comments-heading" className="comments-section">
      <h2 id="comments-heading">{t("comments.title")}</h2>
      {roots.length === 0 && comments.cursor === "" ? <p>{t("comments.none")}</p> : (
        <ul className="comments">
          {roots.map((root) => (
            <Comment key={root.uuid} comment={root} publicationUuid={publicationUuid} signedIn={signedIn} answers={answersOf(root.uuid)} texts={texts} />
          ))}
        </ul>
      )}
      {comments.cursor === "" && comments.nextCursor === undefined ? null : (
        <p className="pager">
          {comments.cursor === "" ? null : <a href={`${href(`/p/${publicationUuid}`, language)}#comments-heading`}>{t("comments.first")}</a>}
          {comments.nextCursor === undefined
            ? null
            : <a rel="next" href={`${href(`/p/${publicationUuid}`, language, { comments: comments.nextCursor })}#comments-heading`}>{t("comments.more")}</a>}
        </p>
      )}
      {signedIn
        ? <CommentForm publicationUuid={publicationUuid} texts={texts} />
        : <p><a href={href("/sign-in", language, { next: `/p/${publicationUuid}?lang=${language}` })}>{t("comments.signIn")}</a></p>}
    </section>
  )
}
