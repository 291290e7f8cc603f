import { useState } from "react"
import { intOf } from "../../components/authoring.js"
import { labelOf } from "../../components/learning.js"
import { TeachingHeader } from "../../components/teaching.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { GroupView } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"teachingGroups">, "data" | "texts">) => `${texts.t("authmore.groups.title")} · ${data.course.courseTitle}`

type Props = PageProps<"teachingGroups">
type Texts = Props["texts"]

const Line = ({ texts, message }: { readonly texts: Texts; readonly message: ReturnType<typeof useAction>["message"] }) =>
  <p role="status" aria-live="polite" className="status">{message === undefined ? "" : texts.t(message)}</p>

/** One group: its members and staff, adding and removing learners of its run, auto-fill, staff, and its settings. */
const Group = ({ group, data, texts }: { readonly group: GroupView; readonly data: Props["data"]; readonly texts: Texts }) => {
  const { t } = texts
  const hydrated = useHydrated()
  const members = useAction()
  const staff = useAction()
  const settings = useAction()
  const outside = data.learners.filter((l) => l.runUuid === group.runUuid && !group.members.some((m) => m.enrollmentUuid === l.enrollmentUuid))
  const free = data.staff.filter((s) => !group.staff.some((g) => g.assignmentUuid === s.assignmentUuid))
  const [learner, setLearner] = useState(outside[0]?.enrollmentUuid ?? "")
  const [person, setPerson] = useState(free[0]?.assignmentUuid ?? "")
  const [name, setName] = useState(group.name)
  const [capacity, setCapacity] = useState(group.capacity === undefined ? "" : String(group.capacity))
  const id = (field: string) => `${field}-${group.uuid}`
  const change = (add: ReadonlyArray<string>, remove: ReadonlyArray<string>, autoFill?: boolean) =>
    void members.run((api) => api["learning.groups.members"]({
      path: { group: group.uuid },
      payload: { requestUuid: requestUuid(), expectedRevision: group.revision, add, remove, ...(autoFill === undefined ? {} : { autoFill }) }
    }))
  const archived = group.status === "archived"
  return (
    <li className="row row--stacked group" data-uuid={group.uuid}>
      <h3 className="row__title">{group.name}</h3>
      <p className="card__meta">
        <span className="tag">{labelOf(texts, "authmore.groupKind", group.kind)}</span>
        {archived ? <span className="tag tag--muted">{t("authmore.groups.archived")}</span> : null}
        <span className="group-count">{group.capacity === undefined ? t("authmore.groups.count", { n: group.memberCount }) : t("authmore.groups.countOf", { n: group.memberCount, capacity: group.capacity })}</span>
        <span>{labelOf(texts, "authmore.groupAssignment", group.assignment)}</span>
        <span>{labelOf(texts, "authmore.groupVisibility", group.visibility)}</span>
      </p>
      <h4>{t("authmore.groups.members")}</h4>
      {group.members.length === 0 ? <p>{t("authmore.groups.noMembers")}</p> : (
        <ul className="group-members">
          {group.members.map((m) => (
            <li key={m.enrollmentUuid}>
              {m.learner}{" "}
              <button type="button" className="button button--secondary button--small" disabled={!hydrated || members.busy} onClick={() => change([], [m.enrollmentUuid])}>
                {t("authmore.groups.remove")}<span className="visually-hidden">: {m.learner}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {archived ? null : (
        <div className="row__actions group-add">
          {outside.length === 0 ? null : (
            <>
              <label htmlFor={id("learner")}>{t("authmore.groups.learner")}</label>
              <select id={id("learner")} value={learner} onChange={(event) => setLearner(event.target.value)}>
                {outside.map((l) => <option key={l.enrollmentUuid} value={l.enrollmentUuid}>{l.learner}</option>)}
              </select>
              <button type="button" className="button button--small" disabled={!hydrated || members.busy || learner === ""} onClick={() => change([learner], [])}>
                {t("authmore.groups.add")}<span className="visually-hidden">: {group.name}</span>
              </button>
            </>
          )}
          {group.assignment === "random" ? (
            <button type="button" className="button button--secondary button--small" disabled={!hydrated || members.busy} onClick={() => change([], [], true)}>
              {t("authmore.groups.autoFill")}<span className="visually-hidden">: {group.name}</span>
            </button>
          ) : null}
        </div>
      )}
      <Line texts={texts} message={members.message} />
      <h4>{t("authmore.groups.staff")}</h4>
      {group.staff.length === 0 ? <p>{t("authmore.groups.noStaff")}</p> : (
        <ul className="group-staff">
          {group.staff.map((s) => (
            <li key={s.assignmentUuid}>
              {s.name} ({labelOf(texts, "teaching.role", s.role)}){" "}
              {data.course.roles.includes("owner") ? (
                <button type="button" className="button button--secondary button--small" disabled={!hydrated || staff.busy}
                  onClick={() => void staff.run((api) => api["learning.groups.staff"]({
                    path: { group: group.uuid }, payload: { requestUuid: requestUuid(), expectedRevision: group.revision, add: [], remove: [s.assignmentUuid] }
                  }))}>
                  {t("authmore.groups.detach")}<span className="visually-hidden">: {s.name}</span>
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      {!data.course.roles.includes("owner") || free.length === 0 || archived ? null : (
        <div className="row__actions">
          <label htmlFor={id("staff")}>{t("authmore.groups.staffMember")}</label>
          <select id={id("staff")} value={person} onChange={(event) => setPerson(event.target.value)}>
            {free.map((s) => <option key={s.assignmentUuid} value={s.assignmentUuid}>{s.name} ({labelOf(texts, "teaching.role", s.role)})</option>)}
          </select>
          <button type="button" className="button button--small" disabled={!hydrated || staff.busy || person === ""}
            onClick={() => void staff.run((api) => api["learning.groups.staff"]({
              path: { group: group.uuid }, payload: { requestUuid: requestUuid(), expectedRevision: group.revision, add: [person], remove: [] }
            }))}>
            {t("authmore.groups.attach")}<span className="visually-hidden">: {group.name}</span>
          </button>
        </div>
      )}
      <Line texts={texts} message={staff.message} />
      <details>
        <summary>{t("authmore.groups.settings", { name: group.name })}</summary>
        <form className="stack" onSubmit={(event) => {
          event.preventDefault()
          const limit = intOf(capacity)
          void settings.run((api) => api["learning.groups.update"]({
            path: { group: group.uuid },
            payload: { requestUuid: requestUuid(), expectedRevision: group.revision, name: name.trim(), capacity: limit === undefined ? null : limit }
          }))
        }}>
          <div className="field">
            <label htmlFor={id("name")}>{t("authmore.groups.name")}</label>
            <input id={id("name")} required maxLength={120} value={name} onChange={(event) => setName(event.target.value)} />
          </div>
          <div className="field">
            <label htmlFor={id("capacity")}>{t("authmore.groups.capacity")}</label>
            <input id={id("capacity")} inputMode="numeric" value={capacity} onChange={(event) => setCapacity(event.target.value)} aria-describedby={id("capacity-hint")} />
            <p className="hint" id={id("capacity-hint")}>{t("authmore.groups.capacityHint")}</p>
          </div>
          <p className="row__actions">
            <button type="submit" className="button button--small" disabled={!hydrated || settings.busy}>{t("authmore.groups.saveSettings")}</button>
            <button type="button" className="button button--secondary button--small" disabled={!hydrated || settings.busy}
              onClick={() => void settings.run((api) => api["learning.groups.update"]({
                path: { group: group.uuid }, payload: { requestUuid: requestUuid(), expectedRevision: group.revision, archived: !archived }
              }))}>
              {t(archived ? "authmore.groups.restore" : "authmore.groups.archive")}
            </button>
          </p>
          <Line texts={texts} message={settings.message} />
        </form>
      </details>
    </li>
  )
}

/** A new group in one of the course's runs. */
const Create = ({ data, texts }: Props) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [form, setForm] = useState({ run: data.runs[0]?.uuid ?? "", name: "", kind: "cohort", assignment: "manual", visibility: "separate", capacity: "" })
  if (data.runs.length === 0) return <p>{t("authmore.groups.noRuns")}</p>
  return (
    <section aria-labelledby="new-group" className="panel">
      <h2 id="new-group">{t("authmore.groups.new")}</h2>
      <form className="stack" onSubmit={(event) => {
        event.preventDefault()
        const capacity = intOf(form.capacity)
        void run((api) => api["learning.groups.create"]({
          path: { run: form.run },
          payload: {
            requestUuid: requestUuid(), name: form.name.trim(), kind: form.kind as "cohort", assignment: form.assignment as "manual",
            visibility: form.visibility as "separate", ...(capacity === undefined ? {} : { capacity })
          }
        }))
      }}>
        <div className="field">
          <label htmlFor="group-run">{t("authmore.groups.run")}</label>
          <select id="group-run" value={form.run} onChange={(event) => setForm({ ...form, run: event.target.value })}>
            {data.runs.map((r) => <option key={r.uuid} value={r.uuid}>{r.title}</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor="group-name">{t("authmore.groups.name")}</label>
          <input id="group-name" required maxLength={120} value={form.name} onChange={(event) => setForm({ ...form, name: event.target.value })} />
        </div>
        <div className="field">
          <label htmlFor="group-kind">{t("authmore.groups.kind")}</label>
          <select id="group-kind" value={form.kind} onChange={(event) => setForm({ ...form, kind: event.target.value })}>
            {["cohort", "team", "section"].map((k) => <option key={k} value={k}>{labelOf(texts, "authmore.groupKind", k)}</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor="group-assignment">{t("authmore.groups.assignment")}</label>
          <select id="group-assignment" value={form.assignment} onChange={(event) => setForm({ ...form, assignment: event.target.value })}>
            {["manual", "random", "self"].map((k) => <option key={k} value={k}>{labelOf(texts, "authmore.groupAssignment", k)}</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor="group-visibility">{t("authmore.groups.visibility")}</label>
          <select id="group-visibility" value={form.visibility} onChange={(event) => setForm({ ...form, visibility: event.target.value })}>
            {["separate", "visible"].map((k) => <option key={k} value={k}>{labelOf(texts, "authmore.groupVisibility", k)}</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor="group-capacity">{t("authmore.groups.capacity")}</label>
          <input id="group-capacity" inputMode="numeric" value={form.capacity} onChange={(event) => setForm({ ...form, capacity: event.target.value })} aria-describedby="group-capacity-hint" />
          <p className="hint" id="group-capacity-hint">{t("authmore.groups.capacityHint")}</p>
        </div>
        <p><button type="submit" className="button" disabled={!hydrated || busy}>{t("authmore.groups.create")}</button></p>
        <Line texts={texts} message={message} />
      </form>
    </section>
  )
}

/** The course's groups run by run (cohorts, teams, sections): members, staff and capacity. */
export default function TeachingGroupsPage(props: Props) {
  const { data, texts } = props
  const { t } = texts
  return (
    <div className="teaching-groups">
      <TeachingHeader course={data.course} texts={texts} current="roster">{t("authmore.groups.title")}: {data.course.courseTitle}</TeachingHeader>
      {data.runs.map((r) => {
        const groups = data.groups.filter((g) => g.runUuid === r.uuid)
        return (
          <section key={r.uuid} aria-labelledby={`run-${r.uuid}`}>
            <h2 id={`run-${r.uuid}`}>{r.title}</h2>
            {groups.length === 0 ? <p>{t("authmore.groups.none")}</p> : (
              <ul className="rows">{groups.map((g) => <Group key={g.uuid} group={g} data={data} texts={texts} />)}</ul>
            )}
          </section>
        )
      })}
      <Create {...props} />
    </div>
  )
}
