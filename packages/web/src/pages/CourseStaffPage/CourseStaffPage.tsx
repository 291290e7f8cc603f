import { useState } from "react"
import { CourseHead, requestUuid, Status, useAuthoringAction } from "../../components/authoring.js"
import { labelOf } from "../../components/learning.js"
import { useHydrated } from "../../hydrated.js"
import type { StaffView } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"courseStaff">, "data" | "texts">) => `${data.course.title} · ${texts.t("authoring.tab.staff")}`

type Texts = PageProps<"courseStaff">["texts"]
type Api = typeof import("../../browserApi.js")["api"]
type Atoms = Parameters<Api["learning.staff.permissions"]>[0]["payload"]["grants"]

const roles = ["instructor", "reviewer", "assistant", "analyst"] as const
/** The rights `learning.staff.permissions` may grant or deny (learning/Permissions.ts keeps staff_manage and ownership to the owner). */
const rights = [
  "content_edit", "content_publish", "checkers_manage", "runs_manage", "roster_manage", "dates_grant", "review", "appeals_resolve",
  "grades_release", "grades_adjust", "community_staff", "analytics_read", "audit_read", "pii_read"
] as const

/** One member of the staff: role, state and, for anyone but the owner, rights granted or taken away beyond the role's. */
const Member = ({ texts, course, member }: { readonly texts: Texts; readonly course: string; readonly member: StaffView }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAuthoringAction()
  const [choice, setChoice] = useState<Record<string, "role" | "grant" | "deny">>(() =>
    Object.fromEntries(rights.map((right) => [right, member.grants.includes(right) ? "grant" : member.denies.includes(right) ? "deny" : "role"])))
  const id = (field: string) => `${field}-${member.uuid}`
  return (
    <li className="row row--stacked member" data-uuid={member.uuid}>
      <h3 className="row__title">{member.profileName}</h3>
      <p className="card__meta">
        <span className="tag">{labelOf(texts, "authoring.role", member.role)}</span>
        <span className="tag tag--muted">{labelOf(texts, "authoring.staffStatus", member.status)}</span>
      </p>
      <p className="muted">{labelOf(texts, "authoring.roleRights", member.role)}</p>
      {member.grants.length + member.denies.length === 0 ? null : (
        <p>
          {member.grants.length === 0 ? null : <>{t("authoring.rights.granted")} {member.grants.map((r) => labelOf(texts, "authoring.right", r)).join(", ")}. </>}
          {member.denies.length === 0 ? null : <>{t("authoring.rights.denied")} {member.denies.map((r) => labelOf(texts, "authoring.right", r)).join(", ")}.</>}
        </p>
      )}
      {member.role === "owner" || member.status === "revoked" || member.status === "rejected" ? null : (
        <details className="rights">
          <summary>{t("authoring.rights", { name: member.profileName })}</summary>
          <form className="stack" onSubmit={(event) => {
            event.preventDefault()
            const grants = rights.filter((right) => choice[right] === "grant") as unknown as Atoms
            const denies = rights.filter((right) => choice[right] === "deny") as unknown as Atoms
            void run((api) => api["learning.staff.permissions"]({
              path: { course, assignment: member.uuid },
              payload: { requestUuid: requestUuid(), expectedRevision: member.revision, grants, denies }
            }))
          }}>
            <div className="rights__grid">
              {rights.map((right) => (
                <div className="field" key={right}>
                  <label htmlFor={id(right)}>{labelOf(texts, "authoring.right", right)}</label>
                  <select id={id(right)} value={choice[right]} onChange={(event) => setChoice({ ...choice, [right]: event.target.value as "role" })}>
                    <option value="role">{t("authoring.rights.asRole")}</option>
                    <option value="grant">{t("authoring.rights.grant")}</option>
                    <option value="deny">{t("authoring.rights.deny")}</option>
                  </select>
                </div>
              ))}
            </div>
            <p><button type="submit" className="button button--small" disabled={!hydrated || busy}>{t("authoring.rights.save")}</button></p>
          </form>
          <form className="stack member__remove" onSubmit={(event) => {
            event.preventDefault()
            const reason = String(new FormData(event.currentTarget).get("reason") ?? "").trim()
            void run((api) => api["learning.staff.revoke"]({
              path: { course },
              payload: { requestUuid: requestUuid(), assignmentUuid: member.uuid, expectedRevision: member.revision, reason }
            }))
          }}>
            <div className="field">
              <label htmlFor={id("reason")}>{t("authoring.member.removeWhy")}</label>
              <input id={id("reason")} name="reason" maxLength={1000} />
            </div>
            <p><button type="submit" className="button button--secondary button--small" disabled={!hydrated || busy}>{t("authoring.member.remove")}</button></p>
          </form>
        </details>
      )}
      <Status texts={texts} message={message} />
    </li>
  )
}

/** The course's staff with their rights, email invitations (sent, pending, accepted) and the form that sends one. */
export default function CourseStaffPage({ data, texts }: PageProps<"courseStaff">) {
  const { t } = texts
  const hydrated = useHydrated()
  const invite = useAuthoringAction()
  const revoke = useAuthoringAction()
  const [form, setForm] = useState<{ readonly email: string; readonly role: typeof roles[number]; readonly message: string }>({ email: "", role: "instructor", message: "" })
  const course = data.course.uuid
  return (
    <div className="authoring course-staff">
      <CourseHead texts={texts} course={data.course} current="staff" />
      <section aria-labelledby="staff">
        <h2 id="staff">{t("authoring.staff")}</h2>
        <ul className="rows">
          {data.staff.map((member) => <Member key={member.uuid} texts={texts} course={course} member={member} />)}
        </ul>
      </section>
      <section aria-labelledby="invite" className="panel">
        <h2 id="invite">{t("authoring.invite")}</h2>
        <p className="hint">{t("authoring.invite.hint")}</p>
        <form className="stack" onSubmit={(event) => {
          event.preventDefault()
          void invite.run((api) => api["learning.staff.email_invite"]({
            path: { course },
            payload: { requestUuid: requestUuid(), email: form.email.trim(), role: form.role, scope: {}, ...(form.message.trim() === "" ? {} : { message: form.message.trim() }) }
          }))
        }}>
          <div className="field">
            <label htmlFor="invite-email">{t("authoring.invite.email")}</label>
            <input id="invite-email" type="email" autoComplete="off" required maxLength={254} value={form.email} onChange={(event) => setForm({ ...form, email: event.target.value })} />
          </div>
          <div className="field">
            <label htmlFor="invite-role">{t("authoring.invite.role")}</label>
            <select id="invite-role" value={form.role} aria-describedby="invite-role-rights" onChange={(event) => setForm({ ...form, role: event.target.value as typeof form.role })}>
              {roles.map((role) => <option key={role} value={role}>{labelOf(texts, "authoring.role", role)}</option>)}
            </select>
            <p className="hint" id="invite-role-rights">{labelOf(texts, "authoring.roleRights", form.role)}</p>
          </div>
          <div className="field">
            <label htmlFor="invite-message">{t("authoring.invite.message")}</label>
            <textarea id="invite-message" rows={3} maxLength={2000} value={form.message} onChange={(event) => setForm({ ...form, message: event.target.value })} />
          </div>
          <p><button type="submit" className="button" disabled={!hydrated || invite.busy}>{t("authoring.invite.send")}</button></p>
          <Status texts={texts} message={invite.message} />
        </form>
      </section>
      <section aria-labelledby="invitations">
        <h2 id="invitations">{t("authoring.invitations")}</h2>
        {data.invitations.length === 0 ? <p>{t("authoring.invitations.none")}</p> : (
          <ul className="rows">
            {data.invitations.map((invitation) => (
              <li key={invitation.uuid} className="row invitation" data-uuid={invitation.uuid}>
                <div>
                  <h3 className="row__title">{invitation.emailHint}</h3>
                  <p className="card__meta">
                    <span className="tag">{labelOf(texts, "authoring.role", invitation.role)}</span>
                    <span className={`tag tag--muted invitation-status--${invitation.status}`}>{labelOf(texts, "authoring.invitationStatus", invitation.status)}</span>
                    {invitation.status === "pending" ? <span>{t("authoring.invitation.until", { date: texts.date(invitation.expiresAt) })}</span> : null}
                  </p>
                </div>
                {invitation.status !== "pending" ? null : (
                  <button type="button" className="button button--secondary button--small" disabled={!hydrated || revoke.busy}
                    aria-label={t("authoring.invitation.revokeOf", { email: invitation.emailHint })}
                    onClick={() => void revoke.run((api) => api["learning.staff.email_revoke"]({ path: { invitation: invitation.uuid }, payload: { requestUuid: requestUuid() } }))}>
                    {t("authoring.invitation.revoke")}
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
        <Status texts={texts} message={revoke.message} />
      </section>
    </div>
  )
}
