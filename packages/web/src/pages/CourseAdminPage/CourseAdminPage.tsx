import { useState } from "react"
import { CourseHead, requestUuid, Status, useAuthoringAction } from "../../components/authoring.js"
import { jobPath } from "../../components/courseAdmin.js"
import { href } from "../../components/Layout.js"
import { labelOf } from "../../components/learning.js"
import { useHydrated } from "../../hydrated.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"courseAdmin">, "data" | "texts">) => `${data.course.title} · ${texts.t("authmore.tab.admin")}`

type Props = PageProps<"courseAdmin">

/** A deep copy of the draft as a new course of the caller (learning.courses.copy); its editor opens. */
const Copy = ({ data, texts }: Props) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAuthoringAction()
  const [name, setName] = useState(t("authmore.copy.default", { title: data.course.title }).slice(0, 160))
  const [checkers, setCheckers] = useState(true)
  return (
    <section aria-labelledby="copy" className="panel">
      <h2 id="copy">{t("authmore.copy")}</h2>
      <p className="hint">{t("authmore.copy.hint")}</p>
      <form className="stack" onSubmit={(event) => {
        event.preventDefault()
        void run((api) => api["learning.courses.copy"]({ path: { course: data.course.uuid }, payload: { requestUuid: requestUuid(), title: name.trim(), includeCheckers: checkers } }),
          (copy) => location.assign(href(`/authoring/courses/${copy.uuid}`, language)))
      }}>
        <div className="field">
          <label htmlFor="copy-title">{t("authmore.copy.title")}</label>
          <input id="copy-title" required maxLength={160} value={name} onChange={(event) => setName(event.target.value)} />
        </div>
        <label className="check"><input id="copy-checkers" type="checkbox" checked={checkers} onChange={(event) => setCheckers(event.target.checked)} /> <span className="check__text">{t("authmore.withCheckers")}</span></label>
        <p><button type="submit" className="button" disabled={!hydrated || busy}>{t("authmore.copy.make")}</button></p>
        <Status texts={texts} message={message} />
      </form>
    </section>
  )
}

/** The course as a birzha-course/1 package (learning.exports.course): a job whose page offers the file once it is made. */
const Package = ({ data, texts }: Props) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAuthoringAction()
  const [checkers, setCheckers] = useState(false)
  return (
    <section aria-labelledby="package" className="panel">
      <h2 id="package">{t("authmore.package")}</h2>
      <p className="hint">{t("authmore.package.hint")}</p>
      <form className="stack" onSubmit={(event) => {
        event.preventDefault()
        void run((api) => api["learning.exports.course"]({ path: { course: data.course.uuid }, payload: { requestUuid: requestUuid(), includeCheckers: checkers } }),
          (job) => location.assign(href(jobPath(job.uuid), language)))
      }}>
        <label className="check"><input id="package-checkers" type="checkbox" checked={checkers} onChange={(event) => setCheckers(event.target.checked)} /> <span className="check__text">{t("authmore.withCheckers")}</span></label>
        <p><button type="submit" className="button" disabled={!hydrated || busy}>{t("authmore.package.make")}</button></p>
        <Status texts={texts} message={message} />
      </form>
    </section>
  )
}

/** Saving a module or step to the library, and putting a saved part into this draft (with fresh node keys). */
const Library = ({ data, texts }: Props) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const save = useAuthoringAction()
  const insert = useAuthoringAction()
  const [node, setNode] = useState(data.nodes[0]?.nodeKey ?? "")
  const [name, setName] = useState(data.nodes[0]?.title ?? "")
  const [item, setItem] = useState(data.library[0]?.uuid ?? "")
  return (
    <section aria-labelledby="library" className="panel">
      <h2 id="library">{t("authmore.library")}</h2>
      <p className="hint">{t("authmore.library.hint")} <a href={href("/authoring/library", language)}>{t("authmore.library.open")}</a></p>
      {data.nodes.length === 0 ? <p>{t("authmore.library.empty")}</p> : (
        <form className="stack" onSubmit={(event) => {
          event.preventDefault()
          void save.run((api) => api["learning.library.save"]({ path: { course: data.course.uuid }, payload: { requestUuid: requestUuid(), nodeKey: node, title: name.trim() } }))
        }}>
          <div className="field">
            <label htmlFor="library-node">{t("authmore.library.node")}</label>
            <select id="library-node" value={node} onChange={(event) => {
              setNode(event.target.value)
              setName(data.nodes.find((n) => n.nodeKey === event.target.value)?.title ?? "")
            }}>
              {data.nodes.map((n) => <option key={n.nodeKey} value={n.nodeKey}>{labelOf(texts, "authmore.nodeKind", n.kind)}: {n.title}</option>)}
            </select>
          </div>
          <div className="field">
            <label htmlFor="library-title">{t("authmore.library.title")}</label>
            <input id="library-title" required maxLength={160} value={name} onChange={(event) => setName(event.target.value)} />
          </div>
          <p><button type="submit" className="button button--secondary" disabled={!hydrated || save.busy}>{t("authmore.library.save")}</button></p>
          <Status texts={texts} message={save.message} />
        </form>
      )}
      {data.library.length === 0 ? <p>{t("authmore.library.none")}</p> : (
        <form className="stack" onSubmit={(event) => {
          event.preventDefault()
          void insert.run((api) => api["learning.library.insert"]({
            path: { course: data.course.uuid, item },
            payload: { requestUuid: requestUuid(), expectedRevision: data.course.revision }
          }), () => location.assign(href(`/authoring/courses/${data.course.uuid}`, language)))
        }}>
          <div className="field">
            <label htmlFor="library-item">{t("authmore.library.item")}</label>
            <select id="library-item" value={item} onChange={(event) => setItem(event.target.value)}>
              {data.library.map((i) => <option key={i.uuid} value={i.uuid}>{i.title} ({t("authmore.library.size", { steps: i.steps })})</option>)}
            </select>
          </div>
          <p><button type="submit" className="button button--secondary" disabled={!hydrated || insert.busy}>{t("authmore.library.insert")}</button></p>
          <Status texts={texts} message={insert.message} />
        </form>
      )}
    </section>
  )
}

/** A bundle: this draft made a series of the caller's published single courses (learning.courses.bundle). */
const Bundle = ({ data, texts }: Props) => {
  const { t } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAuthoringAction()
  const [chosen, setChosen] = useState<Record<string, "no" | "required" | "optional">>(() =>
    Object.fromEntries(data.bundleable.map((c) => {
      const member = data.members.find((m) => m.courseUuid === c.uuid)
      return [c.uuid, member === undefined ? "no" : member.required ? "required" : "optional"]
    })))
  const titleOf = (uuid: string) => data.bundleable.find((c) => c.uuid === uuid)?.title ?? uuid
  return (
    <section aria-labelledby="bundle" className="panel">
      <h2 id="bundle">{t("authmore.bundle")}</h2>
      <p className="hint">{t("authmore.bundle.hint")}</p>
      {data.members.length === 0 ? null : (
        <ul className="bundle-members">
          {data.members.map((m) => <li key={m.courseUuid}>{titleOf(m.courseUuid)} · {t(m.required ? "authmore.bundle.required" : "authmore.bundle.optional")}</li>)}
        </ul>
      )}
      {data.bundleable.length === 0 ? <p>{t("authmore.bundle.none")}</p> : (
        <form className="stack" onSubmit={(event) => {
          event.preventDefault()
          const members = Object.entries(chosen).filter(([, how]) => how !== "no").map(([courseUuid, how]) => ({ courseUuid, required: how === "required" }))
          void run((api) => api["learning.courses.bundle"]({
            path: { course: data.course.uuid },
            payload: { requestUuid: requestUuid(), expectedRevision: data.course.revision, members }
          }))
        }}>
          {data.bundleable.map((c) => (
            <div className="field" key={c.uuid}>
              <label htmlFor={`bundle-${c.uuid}`}>{c.title}</label>
              <select id={`bundle-${c.uuid}`} value={chosen[c.uuid]} onChange={(event) => setChosen({ ...chosen, [c.uuid]: event.target.value as "no" })}>
                <option value="no">{t("authmore.bundle.no")}</option>
                <option value="required">{t("authmore.bundle.required")}</option>
                <option value="optional">{t("authmore.bundle.optional")}</option>
              </select>
            </div>
          ))}
          <p><button type="submit" className="button button--secondary" disabled={!hydrated || busy}>{t("authmore.bundle.save")}</button></p>
          <Status texts={texts} message={message} />
        </form>
      )}
    </section>
  )
}

/** Handing the course to another profile: the candidates the API names, one pending invitation, withdrawn while pending. */
const Ownership = ({ data, texts }: Props) => {
  const { t } = texts
  const hydrated = useHydrated()
  const invite = useAuthoringAction()
  const cancel = useAuthoringAction()
  const [to, setTo] = useState(data.candidates[0]?.profileUuid ?? "")
  const [previous, setPrevious] = useState<"instructor" | "none">("instructor")
  const [note, setNote] = useState("")
  const pending = data.transfers.some((x) => x.status === "pending")
  return (
    <section aria-labelledby="ownership" className="panel">
      <h2 id="ownership">{t("authmore.ownership")}</h2>
      <p className="hint">{t("authmore.ownership.hint")}</p>
      {data.transfers.length === 0 ? null : (
        <ul className="rows">
          {data.transfers.map((x) => (
            <li key={x.uuid} className="row transfer" data-uuid={x.uuid}>
              <div>
                <h3 className="row__title">{x.toProfileName}</h3>
                <p className="card__meta">
                  <span className={`tag transfer-status--${x.status}`}>{labelOf(texts, "authmore.ownershipStatus", x.status)}</span>
                  <span>{labelOf(texts, "authmore.previousRole", x.previousOwnerRole)}</span>
                  {x.status === "pending" ? <span>{t("authmore.ownership.until", { date: texts.date(x.expiresAt) })}</span> : null}
                </p>
              </div>
              {x.status !== "pending" ? null : (
                <button type="button" className="button button--secondary button--small" disabled={!hydrated || cancel.busy}
                  onClick={() => void cancel.run((api) => api["learning.ownership.cancel"]({ path: { invitation: x.uuid }, payload: { requestUuid: requestUuid() } }))}>
                  {t("authmore.ownership.cancel")}<span className="visually-hidden">: {x.toProfileName}</span>
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <Status texts={texts} message={cancel.message} />
      {pending ? null : data.candidates.length === 0 ? <p>{t("authmore.ownership.noCandidates")}</p> : (
        <form className="stack" onSubmit={(event) => {
          event.preventDefault()
          void invite.run((api) => api["learning.ownership.invite"]({
            path: { course: data.course.uuid },
            payload: { requestUuid: requestUuid(), profileUuid: to, previousOwnerRole: previous, ...(note.trim() === "" ? {} : { message: note.trim() }) }
          }))
        }}>
          <div className="field">
            <label htmlFor="ownership-to">{t("authmore.ownership.to")}</label>
            <select id="ownership-to" value={to} onChange={(event) => setTo(event.target.value)}>
              {data.candidates.map((c) => <option key={c.profileUuid} value={c.profileUuid}>{c.name} ({labelOf(texts, "authmore.candidate", c.source)})</option>)}
            </select>
          </div>
          <div className="field">
            <label htmlFor="ownership-previous">{t("authmore.ownership.previous")}</label>
            <select id="ownership-previous" value={previous} onChange={(event) => setPrevious(event.target.value as "none")}>
              <option value="instructor">{labelOf(texts, "authmore.previousRole", "instructor")}</option>
              <option value="none">{labelOf(texts, "authmore.previousRole", "none")}</option>
            </select>
          </div>
          <div className="field">
            <label htmlFor="ownership-message">{t("authmore.ownership.message")}</label>
            <textarea id="ownership-message" rows={3} maxLength={2000} value={note} onChange={(event) => setNote(event.target.value)} />
          </div>
          <p><button type="submit" className="button" disabled={!hydrated || invite.busy}>{t("authmore.ownership.invite")}</button></p>
          <Status texts={texts} message={invite.message} />
        </form>
      )}
    </section>
  )
}

/** A course's administration: copy, package export, library, bundle and (for its owner) ownership transfer. */
export default function CourseAdminPage(props: Props) {
  const { data, texts } = props
  return (
    <div className="authoring course-admin">
      <CourseHead texts={texts} course={data.course} current="admin" />
      <div className="course-admin__grid">
        <Copy {...props} />
        <Package {...props} />
        <Library {...props} />
        <Bundle {...props} />
        {data.course.owner ? <Ownership {...props} /> : null}
      </div>
    </div>
  )
}
