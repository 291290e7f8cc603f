import { ContentView, pictureSrc } from "../../components/ContentView.js"
import { CommentsSection } from "../../components/Comments.js"
import { href } from "../../components/Layout.js"
import { ComplaintForm, FavoriteButton } from "../../components/Social.js"
import { factsOf, kindLabel } from "../../components/format.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import { type FormEvent, useState } from "react"
import type { PageProps } from "../types.js"

/**
 * The respond form of a task another person published: a message and the proposed budget
 * (responses.create); of a vacancy: a cover letter (job_responses.create).
 */
const RespondForm = ({ uuid, kind, texts }: { readonly uuid: string; readonly kind: "task" | "vacancy"; readonly texts: PageProps<"publication">["texts"] }) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [sent, setSent] = useState(false)
  const respond = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const values = new FormData(event.currentTarget)
    const body = String(values.get("body") ?? "").trim()
    const budget = String(values.get("budget") ?? "").trim()
    void run(
      (api) =>
        kind === "vacancy"
          ? api["job_responses.create"]({ payload: { requestUuid: requestUuid(), publicationUuid: uuid, body } })
          : api["responses.create"]({ payload: { requestUuid: requestUuid(), publicationUuid: uuid, body, ...(budget === "" ? {} : { budget }) } }),
      () => setSent(true)
    )
  }
  return (
    <section aria-labelledby="respond" className="panel">
      <h2 id="respond">{t(kind === "vacancy" ? "respond.vacancyTitle" : "respond.title")}</h2>
      {sent
        ? <p role="status">{t("respond.sent")} <a href={href("/responses", language)}>{t("nav.responses")}</a></p>
        : (
          <form onSubmit={respond} className="stack">
            <label htmlFor="respond-body">{t(kind === "vacancy" ? "respond.coverLetter" : "respond.body")}</label>
            <textarea id="respond-body" name="body" rows={4} maxLength={5000} required />
            {kind === "vacancy" ? null : (
              <>
                <label htmlFor="respond-budget">{t("respond.budget")}</label>
                <input id="respond-budget" name="budget" maxLength={80} />
              </>
            )}
            <button type="submit" className="button" disabled={!hydrated || busy}>{t("respond.send")}</button>
            <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
          </form>
        )}
    </section>
  )
}

/** The offer form of a service another person publishes: what is wanted, a budget and a deadline (offers.create to its owner). */
export const OfferForm = ({ uuid, ownerUuid, texts }: { readonly uuid: string; readonly ownerUuid: string; readonly texts: PageProps<"publication">["texts"] }) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [sent, setSent] = useState(false)
  const offer = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const values = new FormData(event.currentTarget)
    const field = (name: string) => String(values.get(name) ?? "").trim()
    void run(
      (api) =>
        api["offers.create"]({
          payload: {
            requestUuid: requestUuid(), recipientProfileUuid: ownerUuid, publicationUuid: uuid, body: field("body"),
            ...(field("budget") === "" ? {} : { budget: field("budget") }),
            ...(field("deadline") === "" ? {} : { deadline: field("deadline") })
          }
        }),
      () => setSent(true)
    )
  }
  return (
    <section aria-labelledby="offer" className="panel">
      <h2 id="offer">{t("offer.title")}</h2>
      {sent
        ? <p role="status">{t("offer.sent")} <a href={href("/responses", language)}>{t("nav.responses")}</a></p>
        : (
          <form onSubmit={offer} className="stack">
            <label htmlFor="offer-body">{t("offer.body")}</label>
            <textarea id="offer-body" name="body" rows={4} maxLength={5000} required />
            <label htmlFor="offer-budget">{t("offer.budget")}</label>
            <input id="offer-budget" name="budget" maxLength={80} />
            <label htmlFor="offer-deadline">{t("offer.deadline")}</label>
            <input id="offer-deadline" name="deadline" maxLength={120} />
            <button type="submit" className="button" disabled={!hydrated || busy}>{t("offer.send")}</button>
            <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
          </form>
        )}
    </section>
  )
}

/** The invitation form of another person's resume: a letter to its owner (job_invitations.create); they answer on their responses page. */
const InviteForm = ({ uuid, texts }: { readonly uuid: string; readonly texts: PageProps<"publication">["texts"] }) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [sent, setSent] = useState(false)
  const invite = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const body = String(new FormData(event.currentTarget).get("body") ?? "").trim()
    void run((api) => api["job_invitations.create"]({ payload: { requestUuid: requestUuid(), publicationUuid: uuid, body } }), () => setSent(true))
  }
  return (
    <section aria-labelledby="invite" className="panel">
      <h2 id="invite">{t("invite.title")}</h2>
      {sent
        ? <p role="status">{t("invite.sent")} <a href={href("/responses", language)}>{t("nav.responses")}</a></p>
        : (
          <form onSubmit={invite} className="stack">
            <label htmlFor="invite-body">{t("invite.body")}</label>
            <textarea id="invite-body" name="body" rows={4} maxLength={5000} required />
            <button type="submit" className="button" disabled={!hydrated || busy}>{t("invite.send")}</button>
            <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
          </form>
        )}
    </section>
  )
}

export const title = ({ data }: Pick<PageProps<"publication">, "data">) => data.publication.title

export default function PublicationPage({ state, data, texts }: PageProps<"publication">) {
  const { t, language } = texts
  const p = data.publication
  const facts = factsOf(texts, p.kind, p.details)
  const paragraphs = p.description.split(/\n{2,}/).filter((part) => part.trim() !== "")
  return (
    <article className="publication">
      <p className="card__meta">
        <span className="tag">{kindLabel(texts, p.kind)}</span>
        {p.category === "" ? null : <span>{t("publication.category")}: {p.category}</span>}
        {p.closed ? <span className="tag tag--muted">{t("publication.closed")}</span> : null}
      </p>
      <h1>{p.title}</h1>
      {data.author === undefined ? null : (
        <p className="byline">
          {t("publication.author")}: <a href={href(`/u/${data.author.uuid}`, language)} id="author">{data.author.name}</a>
          {p.createdAt === undefined ? null : <span className="muted"> · {t("publication.published", { date: texts.date(p.createdAt) })}</span>}
        </p>
      )}
      <div className="publication__layout">
        <div className="publication__main">
          {p.pictures.length === 0 ? null : (
            <section aria-label={t("publication.pictures")} className="gallery">
              {p.pictures.map((picture) => (
                <figure key={picture.id}>
                  <img src={pictureSrc(picture)} alt={picture.alt} loading="lazy" width={640} height={400} />
                  {picture.caption === "" ? null : <figcaption>{picture.caption}</figcaption>}
                </figure>
              ))}
            </section>
          )}
          {p.lead === undefined ? null : <p className="lead">{p.lead}</p>}
          <div className="description">{paragraphs.map((part, i) => <p key={i}>{part}</p>)}</div>
          {p.blocks.length === 0 ? null : <ContentView blocks={p.blocks} texts={texts} />}
        </div>
        <aside className="publication__aside">
          {facts.length === 0 ? null : (
            <section aria-labelledby="details" className="panel">
              <h2 id="details">{t("publication.details")}</h2>
              <dl className="facts">
                {facts.map((fact) => (
                  <div key={fact.label}>
                    <dt>{t(fact.label)}</dt>
                    <dd>
                      {typeof fact.value === "string"
                        ? (fact.href === undefined ? fact.value : <a href={fact.href} rel="nofollow noopener">{fact.value}</a>)
                        : <ul>{fact.value.map((item) => <li key={item}>{item}</li>)}</ul>}
                    </dd>
                  </div>
                ))}
              </dl>
            </section>
          )}
          {state.session === undefined
            ? (
              <p className="panel">
                <a href={href("/sign-in", language, { next: `/p/${p.uuid}?lang=${language}` })}>{t("publication.signInToRespond")}</a>
              </p>
            )
            : state.session.profileUuid !== p.ownerUuid && (p.kind === "task" || p.kind === "vacancy") && !p.closed
            ? <RespondForm uuid={p.uuid} kind={p.kind} texts={texts} />
            : state.session.profileUuid !== p.ownerUuid && p.kind === "service" && !p.closed
            ? <OfferForm uuid={p.uuid} ownerUuid={p.ownerUuid} texts={texts} />
            : state.session.profileUuid !== p.ownerUuid && p.kind === "resume" && !p.closed
            ? <InviteForm uuid={p.uuid} texts={texts} />
            : null}
          {state.session === undefined ? null : (
            <section aria-label={t("publication.yours")} className="panel">
              <FavoriteButton kind="publication" uuid={p.uuid} favorite={data.favorite === true} texts={texts} />
              {state.session.profileUuid === p.ownerUuid ? null : <ComplaintForm kind="publication" uuid={p.uuid} texts={texts} />}
            </section>
          )}
        </aside>
      </div>
      {data.comments === undefined
        ? null
        : <CommentsSection publicationUuid={p.uuid} comments={data.comments} signedIn={state.session !== undefined} texts={texts} />}
    </article>
  )
}
