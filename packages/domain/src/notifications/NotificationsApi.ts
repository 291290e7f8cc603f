import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Notification, NotificationPage, NotificationPreferences, NotificationQuery, PreferencesUpdate } from "./Notification.js"
import { NotFound, RevisionConflict, wire } from "../kernel/ApiError.js"
import { authenticated } from "../kernel/Operation.js"

/**
 * The one notification inbox (spec: learning operations): every source writes to it
 * (automation rules now, the learning notifier later) and `source` filters it. Scopes as the
 * learning table proposes: reads `learning:read`, changes `learning:study`.
 */
export const NotificationsApi = HttpApiGroup.make("notifications", { topLevel: true })
  .add(
    authenticated("GET", "learning.notifications.list", "/api/v1/learning/notifications", {
      scopes: ["learning:read"],
      summary: "The acting profile's notifications, newest first: learning and automation (source), unread only with unread=true"
    }).setUrlParams(NotificationQuery).addSuccess(NotificationPage)
  )
  .add(
    authenticated("POST", "learning.notifications.read", "/api/v1/learning/notifications/:notification/read", {
      scopes: ["learning:study"],
      summary: "Mark one notification read (reading it again changes nothing)"
    }, [wire(NotFound)])
      .setPath(Schema.Struct({ notification: Schema.UUID }))
      .addSuccess(Notification)
  )
  .add(
    authenticated("GET", "learning.notification_preferences.get", "/api/v1/learning/notification-preferences", {
      scopes: ["learning:read"],
      summary: "The acting profile's notification preferences (revision 0 until the first save)"
    }).addSuccess(NotificationPreferences)
  )
  .add(
    authenticated("PUT", "learning.notification_preferences.update", "/api/v1/learning/notification-preferences", {
      scopes: ["learning:study"],
      summary: "Replace the preferences at expectedRevision: per learning event type {inApp, email, digest}, and quiet hours"
    }, [wire(RevisionConflict)]).setPayload(PreferencesUpdate).addSuccess(NotificationPreferences)
  )
  .annotate(OpenApi.Description, "The notification inbox of a profile, for every source")
