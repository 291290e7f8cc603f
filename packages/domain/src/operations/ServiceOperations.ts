import { catalog } from "../api/BirzhaApi.js"
import { AdminOperations } from "../admin/AdminOperations.js"
import { AutomationsOperations } from "../automations/AutomationsOperations.js"
import { NotificationsOperations } from "../notifications/NotificationsOperations.js"
import { AuthOperations } from "../auth/AuthOperations.js"
import { IntegrationCommandsOperations } from "../commands/IntegrationCommandsOperations.js"
import { CommentsOperations } from "../comments/CommentsOperations.js"
import { EventsOperations } from "../events/EventsOperations.js"
import { FilesOperations } from "../files/FilesOperations.js"
import { KeysOperations } from "../keys/KeysOperations.js"
import { OAuthOperations } from "../oauth/OAuthOperations.js"
import { LearningOperations } from "../learning/courses/CoursesOperations.js"
import { AccountOperations } from "../profiles/AccountOperations.js"
import { PublicationsOperations } from "../publications/PublicationsOperations.js"
import { RelationsOperations } from "../relations/RelationsOperations.js"
import { ReviewsAreaOperations } from "../reviews/ReviewsOperations.js"
import { WebhooksOperations } from "../webhooks/WebhooksOperations.js"
import { HealthOperations } from "./HealthOperations.js"
import { Operations } from "./Operations.js"

/** Every area's implementations of the catalog: the service's one registry. */
export const serviceImplementations = [
  HealthOperations,
  AuthOperations,
  AccountOperations,
  EventsOperations,
  CommentsOperations,
  FilesOperations,
  KeysOperations,
  OAuthOperations,
  IntegrationCommandsOperations,
  WebhooksOperations,
  ...PublicationsOperations,
  ...RelationsOperations,
  ...ReviewsAreaOperations,
  AutomationsOperations,
  NotificationsOperations,
  ...LearningOperations,
  AdminOperations
] as const

/** The registry over the whole catalog; needs the database, the server key, mail and the settings the areas read. */
export const OperationsLive = Operations.layer(catalog, serviceImplementations)
