import { href } from "../../components/Layout.js"
import { labelOf, Stars } from "../../components/learning.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { RunView } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data }: Pick<PageProps<"course">, "data">) => data.course.title

/** One run: its dates, pacing and admission, and the enroll (or apply) form for a signed-in visitor. */
const Run = ({ run, signedIn, enrolled, texts, path }: {
  readonly run: RunView
  readonly signedIn: boolean
  readonly enrolled: boolean
  readonly texts: PageProps<"course">["texts"]
  readonly path: string
}) => {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run: act } = useAction()
  const applying = run.admission === "approval"
  const enroll = () => {
    const motivation = (document.getElementById(`motivation-${run.uuid}`) as HTMLTextAreaElement | null)?.value.trim() ?? ""
    void act(
      async (api) => {
        const enrollment = await api["learning.enrollments.enroll"]({
          path: { run: run.uuid },
          payload: { requestUuid: requestUuid(), ...(applying && motivation !== "" ? { application: { answers: { motivation } } } : {}) }
        })
        // An open run that has begun: start at once, so the first steps open (a run not started yet is started later, in the player).
        if (enrollment.status === "active" && run.status === "running") {
          await api["learning.enrollments.start"]({ path: { enrollment: enrollment.uuid }, payload: { requestUuid: requestUuid(), expectedRevision: enrollment.revision } })
            .catch(() => undefined)
        }
        return enrollment
      },
      (enrollment) => {
        location.href = enrollment.status === "active" ? href(`/learning/${enrollment.uuid}`, language) : href(path, language)
      }
    )
  }
  return (
    <li className="row row--stacked">
      <h3 className="row__title">{run.title}</h3>
      <p className="card__meta">
        <span className="tag tag--muted">{labelOf(texts, "learning.runStatus", run.status)}</span>
        <span>{labelOf(texts, "learning.pacing", run.pacing)}</span>
        <span>{labelOf(texts, "learning.admission", run.admission)}</span>
      </p>
      <p>
        {run.endsAt === undefined
          ? t("learning.run.from", { date: texts.date(run.startsAt) })
          : t("learning.run.dates", { from: texts.date(run.startsAt), to: texts.date(run.endsAt) })}
        {run.capacity === undefined ? null : ` · ${t("learning.run.capacity", { n: run.capacity })}`}
      </p>
      {enrolled || run.admission === "invite" ? null : signedIn ? (
        <div className="stack">
          {applying ? (
            <>
              <label htmlFor={`motivation-${run.uuid}`}>{t("learning.apply.motivation")}</label>
              <textarea id={`motivation-${run.uuid}`} rows={3} maxLength={5000} />
            </>
          ) : null}
          <p><button type="button" className="button" disabled={!hydrated || busy} onClick={enroll}>{t(applying ? "learning.apply" : "learning.enroll")}</button></p>
          <p role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
        </div>
      ) : <p><a className="button button--secondary" href={href("/sign-in", language, { next: path })}>{t("learning.signInToEnroll")}</a></p>}
    </li>
  )
}

/** A course's public page, rendered on the server: syllabus, runs with their dates, who teaches, reviews; enroll. */
export default function CoursePage({ state, data, texts }: PageProps<"course">) {
  const { t, language } = texts
  const { course } = data
  const modules = course.outline.filter((node) => node.kind === "module")
  const loose = course.outline.filter((node) => node.kind === "step" && (node.parentKey === undefined || !modules.some((m) => m.nodeKey === node.parentKey)))
  const meta = course.metadata
  const facts: Array<[string, string]> = []
  if (typeof meta["level"] === "string") facts.push([t("field.level"), labelOf(texts, "value.level", meta["level"])])
  if (typeof meta["format"] === "string") facts.push([t("field.format"), labelOf(texts, "value.format", meta["format"])])
  if (typeof meta["durationHours"] === "number") facts.push([t("field.durationHours"), t("value.hours", { n: meta["durationHours"] })])
  const stepList = (steps: typeof course.outline) => (
    <ol className="syllabus__steps">
      {steps.map((step) => (
        <li key={step.nodeKey}>{step.title} <span className="muted">· {labelOf(texts, "learning.stepType", step.stepType ?? "text")}</span></li>
      ))}
    </ol>
  )
  const enrolled = data.enrollment !== undefined
  return (
    <article>
      <p className="card__meta"><a href={href("/courses", language)}>{t("learning.courses.all")}</a></p>
      <h1>{course.title}</h1>
      {course.summary === "" ? null : <p className="lead">{course.summary}</p>}
      {enrolled ? (
        <p className="panel">
          {t("learning.enrolledAs", { status: labelOf(texts, "learning.enrollmentStatus", data.enrollment!.status) })}{" "}
          <a className="button" href={href(`/learning/${data.enrollment!.uuid}`, language)}>{t("learning.toCourse")}</a>
        </p>
      ) : null}
      <div className="publication__layout">
        <div>
          <section aria-labelledby="syllabus">
            <h2 id="syllabus">{t("learning.syllabus")}</h2>
            {modules.length === 0 && loose.length === 0 ? <p>{t("learning.syllabus.empty")}</p> : (
              <ol className="syllabus">
                {modules.map((module) => (
                  <li key={module.nodeKey}>
                    <h3>{module.title}</h3>
                    {stepList(course.outline.filter((node) => node.kind === "step" && node.parentKey === module.nodeKey))}
                  </li>
                ))}
              </ol>
            )}
            {loose.length === 0 ? null : stepList(loose)}
          </section>
          <section aria-labelledby="schedule">
            <h2 id="schedule">{t("learning.schedule")}</h2>
            {course.runs.length === 0 ? <p>{t("learning.schedule.none")}</p> : (
              <ul className="rows">
                {course.runs.map((run) => (
                  <Run key={run.uuid} run={run} signedIn={state.session !== undefined} enrolled={enrolled} texts={texts} path={`/courses/${course.uuid}`} />
                ))}
              </ul>
            )}
          </section>
          <section aria-labelledby="course-reviews">
            <h2 id="course-reviews">{t("learning.reviews")}</h2>
            {data.reviews.count === 0 ? <p>{t("learning.reviews.none")}</p> : (
              <>
                <p className="rating">
                  {data.reviews.average === undefined ? null : <Stars texts={texts} rating={data.reviews.average} />}
                  <span>{t("learning.reviews.summary", { n: data.reviews.count, average: texts.number(data.reviews.average ?? 0) })}</span>
                </p>
                <ul className="reviews">
                  {data.reviews.items.map((review) => (
                    <li key={review.uuid} className="review">
                      <p className="review__head">
                        <Stars texts={texts} rating={review.rating} />
                        <span>{review.authorName ?? t("learning.reviews.anonymous")}</span>
                        <time dateTime={review.createdAt} className="muted">{texts.date(review.createdAt)}</time>
                      </p>
                      {review.text === "" ? null : <p>{review.text}</p>}
                    </li>
                  ))}
                </ul>
              </>
            )}
          </section>
        </div>
        <aside>
          <section className="panel" aria-labelledby="about-course">
            <h2 id="about-course">{t("learning.about")}</h2>
            <dl className="facts">
              {facts.map(([label, value]) => <div key={label}><dt>{label}</dt><dd>{value}</dd></div>)}
              <div><dt>{t("learning.version")}</dt><dd>{texts.number(course.versionNumber)}</dd></div>
            </dl>
          </section>
          <section className="panel" aria-labelledby="teachers">
            <h2 id="teachers">{t("learning.teachers")}</h2>
            <ul className="plain">
              {data.author === undefined ? null : <li><a href={href(`/u/${data.author.uuid}`, language)}>{data.author.name}</a> · {t("learning.author")}</li>}
              {data.staff.map((person, index) => <li key={`${person.name}-${index}`}>{person.name} · {labelOf(texts, "learning.role", person.role)}</li>)}
            </ul>
            {data.author === undefined && data.staff.length === 0 ? <p>{t("learning.teachers.unknown")}</p> : null}
          </section>
        </aside>
      </div>
    </article>
  )
}
