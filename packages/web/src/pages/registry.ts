import type { PageName } from "../model.js"

/**
 * Each page's module, by the page's name: its source path (the client build's manifest names its
 * chunk by it) and, in the browser, a dynamic import, so each page is its own chunk. A new page
 * is a folder here, a line in each of these, a route in server/loaders.ts and its data in model.ts.
 */
export const pageSources: Readonly<Record<PageName, string>> = {
  home: "src/pages/HomePage/HomePage.tsx",
  catalog: "src/pages/CatalogPage/CatalogPage.tsx",
  publication: "src/pages/PublicationPage/PublicationPage.tsx",
  profile: "src/pages/ProfilePage/ProfilePage.tsx",
  signIn: "src/pages/SignInPage/SignInPage.tsx",
  account: "src/pages/AccountPage/AccountPage.tsx",
  signInLink: "src/pages/SignInLinkPage/SignInLinkPage.tsx",
  error: "src/pages/ErrorPage/ErrorPage.tsx",
  taskEditor: "src/pages/TaskEditorPage/TaskEditorPage.tsx",
  myPublications: "src/pages/MyPublicationsPage/MyPublicationsPage.tsx",
  moderation: "src/pages/ModerationPage/ModerationPage.tsx",
  responses: "src/pages/ResponsesPage/ResponsesPage.tsx",
  deals: "src/pages/DealsPage/DealsPage.tsx",
  messages: "src/pages/MessagesPage/MessagesPage.tsx",
  thread: "src/pages/ThreadPage/ThreadPage.tsx",
  profileSettings: "src/pages/ProfileSettingsPage/ProfileSettingsPage.tsx",
  vacancyEditor: "src/pages/VacancyEditorPage/VacancyEditorPage.tsx",
  serviceEditor: "src/pages/ServiceEditorPage/ServiceEditorPage.tsx",
  mediaEditor: "src/pages/MediaEditorPage/MediaEditorPage.tsx",
  integrations: "src/pages/IntegrationsPage/IntegrationsPage.tsx",
  eventLog: "src/pages/EventLogPage/EventLogPage.tsx",
  approvals: "src/pages/ApprovalsPage/ApprovalsPage.tsx",
  approval: "src/pages/ApprovalPage/ApprovalPage.tsx",
  webhookApproval: "src/pages/WebhookApprovalPage/WebhookApprovalPage.tsx",
  favorites: "src/pages/FavoritesPage/FavoritesPage.tsx",
  complaints: "src/pages/ComplaintsPage/ComplaintsPage.tsx",
  notifications: "src/pages/NotificationsPage/NotificationsPage.tsx",
  moderationComplaints: "src/pages/ModerationComplaintsPage/ModerationComplaintsPage.tsx",
  moderationReviews: "src/pages/ModerationReviewsPage/ModerationReviewsPage.tsx",
  courses: "src/pages/CoursesPage/CoursesPage.tsx",
  course: "src/pages/CoursePage/CoursePage.tsx",
  myLearning: "src/pages/MyLearningPage/MyLearningPage.tsx",
  player: "src/pages/PlayerPage/PlayerPage.tsx",
  learningCalendar: "src/pages/LearningCalendarPage/LearningCalendarPage.tsx"
}
