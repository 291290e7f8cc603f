import { useState } from "react"
import { requestUuid, Status, useAuthoringAction } from "../../components/authoring.js"
import { href } from "../../components/Layout.js"
import { labelOf } from "../../components/learning.js"
import { useHydrated } from "../../hydrated.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"staffInvitation">, "texts">) => texts.t("authoring.invitation.title")

/**
 * An invitation to a course's staff, opened from its email (`#token=` in the address, never sent
 * to the server with the page): the course, the role and its rights; accept or decline.
 */
export default function StaffInvitationPage({ data, texts }: PageProps<"staffInvitation">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAuthoringAction()
  const [status, setStatus] = useState(data.invitation.status)
  const invitation = data.invitation
  const token = () => new URLSearchParams(location.hash.slice(1)).get("token") ?? undefined
  return (
    <div className="narrow-wide staff-invitation">
      <h1>{t("authoring.invitation.title")}</h1>
      <dl className="facts">
        <div><dt>{t("authoring.invitation.course")}</dt><dd>{invitation.courseTitle}</dd></div>
        <div><dt>{t("authoring.invite.role")}</dt><dd>{labelOf(texts, "authoring.role", invitation.role)}</dd></div>
        <div><dt>{t("authoring.invitation.rights")}</dt><dd>{labelOf(texts, "authoring.roleRights", invitation.role)}</dd></div>
        {invitation.message === "" ? null : <div><dt>{t("authoring.invite.message")}</dt><dd>{invitation.message}</dd></div>}
        <div><dt>{t("authoring.invitation.state")}</dt><dd><span className="tag" id="invitation-status">{labelOf(texts, "authoring.invitationStatus", status)}</span></dd></div>
      </dl>
      {status === "pending" ? (
        <>
          <p>{t("authoring.invitation.until", { date: texts.date(invitation.expiresAt) })}</p>
          <p className="actions">
            <button type="button" className="button" disabled={!hydrated || busy} onClick={() => {
              const mailed = token()
              void run((api) => api["learning.staff.email_accept"]({
                path: { invitation: invitation.uuid },
                payload: { requestUuid: requestUuid(), ...(mailed === undefined ? {} : { token: mailed }) }
              }), () => setStatus("accepted"))
            }}>
              {t("authoring.invitation.accept")}
            </button>
            <button type="button" className="button button--secondary" disabled={!hydrated || busy}
              onClick={() => void run((api) => api["learning.staff.email_reject"]({ path: { invitation: invitation.uuid }, payload: { requestUuid: requestUuid() } }), () => setStatus("rejected"))}>
              {t("authoring.invitation.decline")}
            </button>
          </p>
        </>
      ) : null}
      <div aria-live="polite">
        {status === "accepted" ? (
          <p className="notice">
            {t("authoring.invitation.accepted", { role: labelOf(texts, "authoring.role", invitation.role) })}{" "}
            <a href={href(`/authoring/courses/${invitation.courseUuid}`, language)}>{t("authoring.invitation.openCourse")}</a>
          </p>
        ) : status === "rejected" ? <p className="notice">{t("authoring.invitation.declined")}</p> : null}
      </div>
      <Status texts={texts} message={message} />
    </div>
  )
}
