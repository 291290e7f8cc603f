export * from "./BirzhaClient.js"
export type { Groups } from "./Groups.js"
export * from "./PromiseClient.js"
export * from "./EventFeed.js"
export * from "./Publications.js"
export * from "./WebhookVerification.js"
// What a client names from the service's declarations: its typed errors, the event envelope and
// the publication schemas. They are bundled into this package (it needs no @birzha/domain).
export {
  ArticleData,
  CatalogPublication,
  type ErrorDetails,
  EventEnvelope,
  Forbidden,
  ForbiddenOrigin,
  Gone,
  InternalError,
  InvalidPublication,
  InvalidRequest,
  InvalidState,
  InvalidTask,
  NotFound,
  NotReady,
  PayloadTooLarge,
  PortfolioData,
  Publication,
  PublicationKind,
  RateLimited,
  RequestConflict,
  ResumeData,
  ResyncRequired,
  RevisionConflict,
  ServiceData,
  ServiceUnavailable,
  TaskData,
  TrainingData,
  Unauthenticated,
  UnsupportedMediaType,
  VacancyData
} from "@birzha/domain"
