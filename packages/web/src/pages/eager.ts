import type { PageModule } from "../App.js"
import type { PageName } from "../model.js"
import * as AccountPage from "./AccountPage/AccountPage.js"
import * as CatalogPage from "./CatalogPage/CatalogPage.js"
import * as ErrorPage from "./ErrorPage/ErrorPage.js"
import * as HomePage from "./HomePage/HomePage.js"
import * as ProfilePage from "./ProfilePage/ProfilePage.js"
import * as CustomerPage from "./CustomerPage/CustomerPage.js"
import * as PublicationPage from "./PublicationPage/PublicationPage.js"
import * as SignInLinkPage from "./SignInLinkPage/SignInLinkPage.js"
import * as SignInPage from "./SignInPage/SignInPage.js"
import * as TaskEditorPage from "./TaskEditorPage/TaskEditorPage.js"
import * as MyPublicationsPage from "./MyPublicationsPage/MyPublicationsPage.js"
import * as ModerationPage from "./ModerationPage/ModerationPage.js"
import * as ResponsesPage from "./ResponsesPage/ResponsesPage.js"
import * as DealsPage from "./DealsPage/DealsPage.js"
import * as MessagesPage from "./MessagesPage/MessagesPage.js"
import * as ThreadPage from "./ThreadPage/ThreadPage.js"
import * as ProfileSettingsPage from "./ProfileSettingsPage/ProfileSettingsPage.js"
import * as VacancyEditorPage from "./VacancyEditorPage/VacancyEditorPage.js"
import * as ServiceEditorPage from "./ServiceEditorPage/ServiceEditorPage.js"
import * as MediaEditorPage from "./MediaEditorPage/MediaEditorPage.js"
import * as IntegrationsPage from "./IntegrationsPage/IntegrationsPage.js"
import * as ApprovalsPage from "./ApprovalsPage/ApprovalsPage.js"
import * as ApprovalPage from "./ApprovalPage/ApprovalPage.js"
import * as OAuthConsentPage from "./OAuthConsentPage/OAuthConsentPage.js"
import * as AgentsPage from "./AgentsPage/AgentsPage.js"
import * as WebhookApprovalPage from "./WebhookApprovalPage/WebhookApprovalPage.js"
import * as WebhooksPage from "./WebhooksPage/WebhooksPage.js"
import * as WebhookPage from "./WebhookPage/WebhookPage.js"
import * as FavoritesPage from "./FavoritesPage/FavoritesPage.js"
import * as ComplaintsPage from "./ComplaintsPage/ComplaintsPage.js"
import * as NotificationsPage from "./NotificationsPage/NotificationsPage.js"
import * as EventLogPage from "./EventLogPage/EventLogPage.js"
import * as RulesPage from "./RulesPage/RulesPage.js"
import * as RulePage from "./RulePage/RulePage.js"
import * as ModerationComplaintsPage from "./ModerationComplaintsPage/ModerationComplaintsPage.js"
import * as ModerationReviewsPage from "./ModerationReviewsPage/ModerationReviewsPage.js"
import * as CoursesPage from "./CoursesPage/CoursesPage.js"
import * as CoursePage from "./CoursePage/CoursePage.js"
import * as MyLearningPage from "./MyLearningPage/MyLearningPage.js"
import * as PlayerPage from "./PlayerPage/PlayerPage.js"
import * as LearningCalendarPage from "./LearningCalendarPage/LearningCalendarPage.js"
import * as AuthoringPage from "./AuthoringPage/AuthoringPage.js"
import * as CourseEditorPage from "./CourseEditorPage/CourseEditorPage.js"
import * as CourseRunsPage from "./CourseRunsPage/CourseRunsPage.js"
import * as CourseStaffPage from "./CourseStaffPage/CourseStaffPage.js"
import * as StaffInvitationPage from "./StaffInvitationPage/StaffInvitationPage.js"
import * as TeachingPage from "./TeachingPage/TeachingPage.js"
import * as TeachingCoursePage from "./TeachingCoursePage/TeachingCoursePage.js"
import * as TeachingReviewsPage from "./TeachingReviewsPage/TeachingReviewsPage.js"
import * as ReviewWorkspacePage from "./ReviewWorkspacePage/ReviewWorkspacePage.js"
import * as TeachingAppealsPage from "./TeachingAppealsPage/TeachingAppealsPage.js"
import * as TeachingExtensionsPage from "./TeachingExtensionsPage/TeachingExtensionsPage.js"
import * as TeachingRosterPage from "./TeachingRosterPage/TeachingRosterPage.js"
import * as TeachingRegradePage from "./TeachingRegradePage/TeachingRegradePage.js"
import * as TeachingAnalyticsPage from "./TeachingAnalyticsPage/TeachingAnalyticsPage.js"
import * as TeachingIncidentsPage from "./TeachingIncidentsPage/TeachingIncidentsPage.js"
import * as AdminHealthPage from "./AdminHealthPage/AdminHealthPage.js"
import * as AdminAccountsPage from "./AdminAccountsPage/AdminAccountsPage.js"
import * as AdminAccountPage from "./AdminAccountPage/AdminAccountPage.js"
import * as AdminRolesPage from "./AdminRolesPage/AdminRolesPage.js"
import * as CourseAdminPage from "./CourseAdminPage/CourseAdminPage.js"
import * as AuthorLibraryPage from "./AuthorLibraryPage/AuthorLibraryPage.js"
import * as TeachingGroupsPage from "./TeachingGroupsPage/TeachingGroupsPage.js"
import * as TeachingExportsPage from "./TeachingExportsPage/TeachingExportsPage.js"
import * as LearningJobPage from "./LearningJobPage/LearningJobPage.js"
import * as AdminMailPage from "./AdminMailPage/AdminMailPage.js"

/** The server's page modules, all loaded at once. */
export const pages: Readonly<Record<PageName, PageModule>> = {
  home: HomePage as PageModule,
  catalog: CatalogPage as PageModule,
  publication: PublicationPage as PageModule,
  profile: ProfilePage as PageModule,
  customer: CustomerPage as PageModule,
  signIn: SignInPage as PageModule,
  account: AccountPage as PageModule,
  signInLink: SignInLinkPage as PageModule,
  error: ErrorPage as PageModule,
  taskEditor: TaskEditorPage as PageModule,
  myPublications: MyPublicationsPage as PageModule,
  moderation: ModerationPage as PageModule,
  responses: ResponsesPage as PageModule,
  deals: DealsPage as PageModule,
  messages: MessagesPage as PageModule,
  thread: ThreadPage as PageModule,
  profileSettings: ProfileSettingsPage as PageModule,
  vacancyEditor: VacancyEditorPage as PageModule,
  serviceEditor: ServiceEditorPage as PageModule,
  mediaEditor: MediaEditorPage as PageModule,
  integrations: IntegrationsPage as PageModule,
  approvals: ApprovalsPage as PageModule,
  approval: ApprovalPage as PageModule,
  oauthConsent: OAuthConsentPage as PageModule,
  agents: AgentsPage as PageModule,
  webhookApproval: WebhookApprovalPage as PageModule,
  webhooks: WebhooksPage as PageModule,
  webhook: WebhookPage as PageModule,
  favorites: FavoritesPage as PageModule,
  eventLog: EventLogPage as PageModule,
  rules: RulesPage as PageModule,
  rule: RulePage as PageModule,
  complaints: ComplaintsPage as PageModule,
  notifications: NotificationsPage as PageModule,
  moderationComplaints: ModerationComplaintsPage as PageModule,
  moderationReviews: ModerationReviewsPage as PageModule,
  courses: CoursesPage as PageModule,
  course: CoursePage as PageModule,
  myLearning: MyLearningPage as PageModule,
  player: PlayerPage as PageModule,
  learningCalendar: LearningCalendarPage as PageModule,
  authoring: AuthoringPage as PageModule,
  courseEditor: CourseEditorPage as PageModule,
  courseRuns: CourseRunsPage as PageModule,
  courseStaff: CourseStaffPage as PageModule,
  staffInvitation: StaffInvitationPage as PageModule,
  teaching: TeachingPage as PageModule,
  teachingCourse: TeachingCoursePage as PageModule,
  teachingReviews: TeachingReviewsPage as PageModule,
  reviewWorkspace: ReviewWorkspacePage as PageModule,
  teachingAppeals: TeachingAppealsPage as PageModule,
  teachingExtensions: TeachingExtensionsPage as PageModule,
  teachingRoster: TeachingRosterPage as PageModule,
  teachingRegrade: TeachingRegradePage as PageModule,
  teachingAnalytics: TeachingAnalyticsPage as PageModule,
  teachingIncidents: TeachingIncidentsPage as PageModule,
  adminHealth: AdminHealthPage as PageModule,
  adminAccounts: AdminAccountsPage as PageModule,
  adminAccount: AdminAccountPage as PageModule,
  adminRoles: AdminRolesPage as PageModule,
  courseAdmin: CourseAdminPage as PageModule,
  authorLibrary: AuthorLibraryPage as PageModule,
  teachingGroups: TeachingGroupsPage as PageModule,
  teachingExports: TeachingExportsPage as PageModule,
  learningJob: LearningJobPage as PageModule,
  adminMail: AdminMailPage as PageModule
}
