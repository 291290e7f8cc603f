import type {
  ArticleData,
  Publication,
  PublicationKind,
  PortfolioData,
  ResumeData,
  ServiceData,
  TaskData,
  TrainingData,
  VacancyData
} from "@birzha/domain"

/**
 * The data of each kind as the service answers it: the kind's schema (what `<kind>.save` checked
 * before the draft was stored and a moderator approved it), in its JSON form.
 */
export interface PublicationDataByKind {
  readonly task: typeof TaskData.Encoded
  readonly service: typeof ServiceData.Encoded
  readonly portfolio: typeof PortfolioData.Encoded
  readonly article: typeof ArticleData.Encoded
  readonly vacancy: typeof VacancyData.Encoded
  readonly resume: typeof ResumeData.Encoded
  readonly training: typeof TrainingData.Encoded
}

type DataFields = "kind" | "approved" | "draft"

/**
 * A public read (`getPublication`, `listPublications`, `getCatalog` items) with its data typed by
 * its kind: test `kind` and `approved` narrows to that kind's data.
 */
export type TypedPublication<P extends Pick<Publication, "kind" | "approved"> = Publication> = {
  readonly [K in PublicationKind]:
    & Omit<P, DataFields>
    & { readonly kind: K; readonly approved: PublicationDataByKind[K] }
    & ("draft" extends keyof P ? { readonly draft: PublicationDataByKind[K] } : unknown)
}[PublicationKind]

/**
 * The publication with its data typed by kind (no copy, no check: the service checked the data
 * against the kind's schema when it was saved):
 *
 * ```ts
 * const publication = typedPublication(await client.getPublication({ path: { uuid } }))
 * if (publication.kind === "task") console.log(publication.approved.title, publication.approved.budget)
 * ```
 */
export const typedPublication = <P extends Pick<Publication, "kind" | "approved">>(publication: P): TypedPublication<P> =>
  publication as unknown as TypedPublication<P>
