import { NotificationsApi } from "./NotificationsApi.js"
import { implement } from "../operations/Implementation.js"
import { getPreferences, listNotifications, readNotification, updatePreferences } from "./Notifications.js"

/** The inbox operations over the notifications service. */
export const NotificationsOperations = implement(NotificationsApi)({
  "learning.notifications.list": ({ urlParams }, actor) => listNotifications(actor, urlParams),
  "learning.notifications.read": ({ path }, actor) => readNotification(actor, path.notification),
  "learning.notification_preferences.get": (_, actor) => getPreferences(actor),
  "learning.notification_preferences.update": ({ payload }, actor) => updatePreferences(actor, payload)
})
