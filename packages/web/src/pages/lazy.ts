import type { PageName } from "../model.js"
import type { PageModule } from "../App.js"

/** The browser's page modules, each loaded on demand (one chunk per page). */
export const pageModules: Readonly<Record<PageName, () => Promise<PageModule>>> = {
  home: () => import("./HomePage/HomePage.js") as Promise<PageModule>,
  catalog: () => import("./CatalogPage/CatalogPage.js") as Promise<PageModule>,
  publication: () => import("./PublicationPage/PublicationPage.js") as Promise<PageModule>,
  profile: () => import("./ProfilePage/ProfilePage.js") as Promise<PageModule>,
  signIn: () => import("./SignInPage/SignInPage.js") as Promise<PageModule>,
  account: () => import("./AccountPage/AccountPage.js") as Promise<PageModule>,
  signInLink: () => import("./SignInLinkPage/SignInLinkPage.js") as Promise<PageModule>,
  error: () => import("./ErrorPage/ErrorPage.js") as Promise<PageModule>,
  taskEditor: () => import("./TaskEditorPage/TaskEditorPage.js") as Promise<PageModule>,
  myPublications: () => import("./MyPublicationsPage/MyPublicationsPage.js") as Promise<PageModule>,
  moderation: () => import("./ModerationPage/ModerationPage.js") as Promise<PageModule>,
  responses: () => import("./ResponsesPage/ResponsesPage.js") as Promise<PageModule>,
  deals: () => import("./DealsPage/DealsPage.js") as Promise<PageModule>,
  messages: () => import("./MessagesPage/MessagesPage.js") as Promise<PageModule>,
  thread: () => import("./ThreadPage/ThreadPage.js") as Promise<PageModule>,
  profileSettings: () => import("./ProfileSettingsPage/ProfileSettingsPage.js") as Promise<PageModule>,
  vacancyEditor: () => import("./VacancyEditorPage/VacancyEditorPage.js") as Promise<PageModule>,
  serviceEditor: () => import("./ServiceEditorPage/ServiceEditorPage.js") as Promise<PageModule>,
  mediaEditor: () => import("./MediaEditorPage/MediaEditorPage.js") as Promise<PageModule>,
  integrations: () => import("./IntegrationsPage/IntegrationsPage.js") as Promise<PageModule>,
  approvals: () => import("./ApprovalsPage/ApprovalsPage.js") as Promise<PageModule>,
  approval: () => import("./ApprovalPage/ApprovalPage.js") as Promise<PageModule>,
  webhookApproval: () => import("./WebhookApprovalPage/WebhookApprovalPage.js") as Promise<PageModule>,
  favorites: () => import("./FavoritesPage/FavoritesPage.js") as Promise<PageModule>,
  complaints: () => import("./ComplaintsPage/ComplaintsPage.js") as Promise<PageModule>,
  notifications: () => import("./NotificationsPage/NotificationsPage.js") as Promise<PageModule>,
  moderationComplaints: () => import("./ModerationComplaintsPage/ModerationComplaintsPage.js") as Promise<PageModule>,
  moderationReviews: () => import("./ModerationReviewsPage/ModerationReviewsPage.js") as Promise<PageModule>,
  courses: () => import("./CoursesPage/CoursesPage.js") as Promise<PageModule>,
  course: () => import("./CoursePage/CoursePage.js") as Promise<PageModule>,
  myLearning: () => import("./MyLearningPage/MyLearningPage.js") as Promise<PageModule>,
  player: () => import("./PlayerPage/PlayerPage.js") as Promise<PageModule>,
  learningCalendar: () => import("./LearningCalendarPage/LearningCalendarPage.js") as Promise<PageModule>
}
