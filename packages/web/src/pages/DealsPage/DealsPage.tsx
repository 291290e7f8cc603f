import { useState } from "react"
import { RelationHead } from "../../components/RelationHead.js"
import { requestUuid, uploadFile, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { RelationItem } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"deals">, "texts">) => texts.t("deals.title")

type Transition = "deals.complete" | "deals.request_changes" | "deals.terminate"

/** One deal: its state, the handed-over work, and the forms of what `allowedActions` lets the person do now. */
const Deal = ({ item, sealed, texts }: { readonly item: RelationItem; readonly sealed: boolean | undefined; readonly texts: PageProps<"deals">["texts"] }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [progress, setProgress] = useState<number | undefined>(undefined)
  const field = (id: string) => (document.getElementById(`${id}-${item.uuid}`) as HTMLInputElement | HTMLTextAreaElement | null)
  const can = (operation: string) => item.allowedActions.includes(operation)
  const transition = (operation: Transition) => {
    const reason = field("reason")?.value.trim() ?? ""
    void run((api) =>
      api[operation]({
        payload: {
          requestUuid: requestUuid(), relationUuid: item.uuid, expectedRevision: item.revision,
          ...(operation === "deals.terminate" && reason !== "" ? { reason } : {})
        }
      })
    )
  }
  const handOver = () => {
    const body = field("results")?.value.trim() ?? ""
    const file = (field("file") as HTMLInputElement | null)?.files?.[0]
    void run(async (api) => {
      const references = file === undefined ? [] : [{ kind: "file", uuid: await uploadFile(api, file, "publication_file", setProgress) }]
      return api["deals.results"]({
        payload: {
          requestUuid: requestUuid(), relationUuid: item.uuid, expectedRevision: item.revision,
          ...(body === "" ? {} : { body }), ...(references.length === 0 ? {} : { references })
        }
      })
    })
  }
  const review = () => {
    const rating = Number((document.querySelector(`input[name="rating-${item.uuid}"]:checked`) as HTMLInputElement | null)?.value ?? 0)
    const body = field("review")?.value.trim() ?? ""
    void run((api) => api["reviews.create"]({ payload: { requestUuid: requestUuid(), relationUuid: item.uuid, rating, ...(body === "" ? {} : { body }) } }))
  }
  return (
    <li className="row row--stacked" data-uuid={item.uuid}>
      <RelationHead item={item} texts={texts} />
      {item.autoCompleteAt === undefined ? null : <p>{t("deals.autoComplete", { date: texts.date(item.autoCompleteAt) })}</p>}
      {item.results === undefined ? null : (
        <section className="panel" aria-label={t("deals.results", { n: item.results.version })}>
          <h3>{t("deals.results", { n: item.results.version })}</h3>
          {item.results.body === "" ? null : <p>{item.results.body}</p>}
          <ul>
            {item.results.files.map((uuid, index) => <li key={uuid}><a href={`/api/v1/files/${uuid}/content`}>{t("deals.file", { n: index + 1 })}</a></li>)}
          </ul>
        </section>
      )}
      {can("deals.results") ? (
        <div className="stack">
          <label htmlFor={`results-${item.uuid}`}>{t("deals.resultsBody")}</label>
          <textarea id={`results-${item.uuid}`} rows={3} maxLength={20000} />
          <label htmlFor={`file-${item.uuid}`}>{t("deals.resultsFile")}</label>
          <input id={`file-${item.uuid}`} type="file" />
          {progress === undefined ? null : <progress max={1} value={progress} aria-label={t("deals.uploading")} />}
          <p><button type="button" className="button" disabled={!hydrated || busy} onClick={handOver}>{t("action.deals.results")}</button></p>
        </div>
      ) : null}
      <div className="actions">
        {can("deals.complete") ? <button type="button" className="button" disabled={!hydrated || busy} onClick={() => transition("deals.complete")}>{t("action.deals.complete")}</button> : null}
        {can("deals.request_changes")
          ? <button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => transition("deals.request_changes")}>{t("action.deals.request_changes")}</button>
          : null}
      </div>
      {can("deals.terminate") ? (
        <details>
          <summary>{t("action.deals.terminate")}</summary>
          <div className="stack">
            <label htmlFor={`reason-${item.uuid}`}>{t("deals.reason")}</label>
            <input id={`reason-${item.uuid}`} maxLength={2000} />
            <p><button type="button" className="button button--secondary" disabled={!hydrated || busy} onClick={() => transition("deals.terminate")}>{t("action.deals.terminate")}</button></p>
          </div>
        </details>
      ) : null}
      {item.review?.canReview === true ? (
        <fieldset className="stack">
          <legend>{t("deals.review")}</legend>
          <div className="rating" role="radiogroup" aria-label={t("deals.rating")}>
            {[1, 2, 3, 4, 5].map((n) => (
              <label key={n}><input type="radio" name={`rating-${item.uuid}`} value={n} defaultChecked={n === 5} /> {t("deals.stars", { n })}</label>
            ))}
          </div>
          <label htmlFor={`review-${item.uuid}`}>{t("deals.reviewBody")}</label>
          <textarea id={`review-${item.uuid}`} rows={3} maxLength={4000} />
          <p><button type="button" className="button" disabled={!hydrated || busy} onClick={review}>{t("deals.sendReview")}</button></p>
        </fieldset>
      ) : null}
      {sealed === undefined ? null : <p className="review-state">{t(sealed ? "deals.reviewSealed" : "deals.reviewPublished")}</p>}
      <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
    </li>
  )
}

/** The person's deals, each with what they may do now and when it completes by itself. */
export default function DealsPage({ data, texts }: PageProps<"deals">) {
  const { t } = texts
  const sealedOf = new Map(data.reviews.map((review) => [review.relationUuid, review.sealed]))
  return (
    <div>
      <h1>{t("deals.title")}</h1>
      {data.items.length === 0 ? <p>{t("deals.none")}</p> : (
        <ul className="rows">{data.items.map((item) => <Deal key={item.uuid} item={item} sealed={sealedOf.get(item.uuid)} texts={texts} />)}</ul>
      )}
    </div>
  )
}
