import { useState } from "react"
import { requestUuid, Status, useAuthoringAction } from "../../components/authoring.js"
import { jobPath } from "../../components/courseAdmin.js"
import { href } from "../../components/Layout.js"
import { labelOf } from "../../components/learning.js"
import { uploadFile } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { OwnershipView } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"authorLibrary">, "texts">) => texts.t("authmore.libraryPage.title")

type Texts = PageProps<"authorLibrary">["texts"]

/** An invitation to take a course over: accepted (the caller becomes its owner) or declined. */
const Offer = ({ offer, texts }: { readonly offer: OwnershipView; readonly texts: Texts }) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAuthoringAction()
  return (
    <li className="row row--stacked offer" data-uuid={offer.uuid}>
      <h3 className="row__title">{offer.courseTitle}</h3>
      <p className="card__meta">
        <span className={`tag offer-status--${offer.status}`}>{labelOf(texts, "authmore.ownershipStatus", offer.status)}</span>
        <span>{labelOf(texts, "authmore.previousRole", offer.previousOwnerRole)}</span>
        {offer.status === "pending" ? <span>{t("authmore.ownership.until", { date: texts.date(offer.expiresAt) })}</span> : null}
      </p>
      {offer.message === "" ? null : <blockquote>{offer.message}</blockquote>}
      {offer.status === "accepted" ? <p><a href={href(`/authoring/courses/${offer.courseUuid}`, language)}>{t("authmore.offer.open", { title: offer.courseTitle })}</a></p> : null}
      {offer.status !== "pending" ? null : (
        <p className="row__actions">
          <button type="button" className="button button--small" disabled={!hydrated || busy}
            onClick={() => void run((api) => api["learning.ownership.accept"]({ path: { invitation: offer.uuid }, payload: { requestUuid: requestUuid() } }))}>
            {t("authmore.offer.accept")}<span className="visually-hidden">: {offer.courseTitle}</span>
          </button>
          <button type="button" className="button button--secondary button--small" disabled={!hydrated || busy}
            onClick={() => void run((api) => api["learning.ownership.reject"]({ path: { invitation: offer.uuid }, payload: { requestUuid: requestUuid() } }))}>
            {t("authmore.offer.reject")}<span className="visually-hidden">: {offer.courseTitle}</span>
          </button>
        </p>
      )}
      <Status texts={texts} message={message} />
    </li>
  )
}

/** A birzha-course/1 package uploaded as a file of the caller, then imported as a new draft course: a job whose page follows it. */
const Import = ({ texts }: { readonly texts: Texts }) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAuthoringAction()
  const [progress, setProgress] = useState<number | undefined>(undefined)
  return (
    <section aria-labelledby="import" className="panel">
      <h2 id="import">{t("authmore.import")}</h2>
      <p className="hint">{t("authmore.import.hint")}</p>
      <form className="stack" onSubmit={(event) => {
        event.preventDefault()
        const file = (event.currentTarget.elements.namedItem("package") as HTMLInputElement).files?.[0]
        if (file === undefined) return
        void run(async (api) => {
          const fileUuid = await uploadFile(api, new File([file], file.name, { type: "application/json" }), "publication_file", setProgress)
          return api["learning.courses.import"]({ payload: { requestUuid: requestUuid(), fileUuid, format: "birzha-course/1" } })
        }, (job) => location.assign(href(jobPath(job.uuid), language)))
      }}>
        <div className="field">
          <label htmlFor="import-package">{t("authmore.import.file")}</label>
          <input id="import-package" name="package" type="file" accept="application/json,.json" required />
        </div>
        {progress === undefined ? null : <progress max={1} value={progress} aria-label={t("authmore.import.progress")} />}
        <p><button type="submit" className="button" disabled={!hydrated || busy}>{t("authmore.import.start")}</button></p>
        <Status texts={texts} message={message} />
      </form>
    </section>
  )
}

/** The author's library of saved course parts, the import of a course package, and the courses offered to them to own. */
export default function AuthorLibraryPage({ data, texts }: PageProps<"authorLibrary">) {
  const { t, language } = texts
  return (
    <div className="authoring author-library">
      <p className="muted"><a href={href("/authoring", language)}>{t("authoring.title")}</a></p>
      <h1>{t("authmore.libraryPage.title")}</h1>
      <section aria-labelledby="offers">
        <h2 id="offers">{t("authmore.offers")}</h2>
        {data.offers.length === 0 ? <p>{t("authmore.offers.none")}</p> : (
          <ul className="rows">{data.offers.map((offer) => <Offer key={offer.uuid} offer={offer} texts={texts} />)}</ul>
        )}
      </section>
      <section aria-labelledby="saved">
        <h2 id="saved">{t("authmore.library")}</h2>
        <p className="hint">{t("authmore.libraryPage.hint")}</p>
        {data.items.length === 0 ? <p>{t("authmore.library.none")}</p> : (
          <ul className="rows">
            {data.items.map((item) => (
              <li key={item.uuid} className="row library-item" data-uuid={item.uuid}>
                <h3 className="row__title">{item.title}</h3>
                <p className="card__meta">
                  <span>{t("authmore.library.modules", { n: item.modules })}</span>
                  <span>{t("authmore.library.size", { steps: item.steps })}</span>
                  <span>{t("authmore.library.savedOn", { date: texts.date(item.createdAt) })}</span>
                </p>
              </li>
            ))}
          </ul>
        )}
      </section>
      <Import texts={texts} />
    </div>
  )
}
