import { kindLabel } from "../../components/format.js"
import { href } from "../../components/Layout.js"
import { commandOf } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"myPublications">, "texts">) => texts.t("mine.title")

/** The signed-in profile's publications of every kind: each with its moderation status, when it changed, and its editor. */
export default function MyPublicationsPage({ data, texts }: PageProps<"myPublications">) {
  const { t, language } = texts
  return (
    <div>
      <h1>{t("mine.title")}</h1>
      <p className="actions">
        <a className="button" href={href("/tasks/new", language)}>{t("nav.newTask")}</a>
        <a className="button button--secondary" href={href("/services/new", language)}>{t("mine.newService")}</a>
        <a className="button button--secondary" href={href("/jobs/new", language)}>{t("mine.newVacancy")}</a>
        <a className="button button--secondary" href={href("/portfolio/new", language)}>{t("mine.newPortfolio")}</a>
        <a className="button button--secondary" href={href("/articles/new", language)}>{t("mine.newArticle")}</a>
        <a className="button button--secondary" href={href("/resumes/new", language)}>{t("mine.newResume")}</a>
        <a className="button button--secondary" href={href("/learning/new", language)}>{t("mine.newTraining")}</a>
      </p>
      {data.tasks.length + data.vacancies.length + data.services.length + data.media.length === 0 ? <p>{t("mine.none")}</p> : (
        <ul className="rows" aria-label={t("mine.title")}>
          {[...data.tasks.map((task) => ({ ...task, kind: "task", editor: "tasks" })), ...data.services.map((service) => ({ ...service, kind: "service", editor: "services" })), ...data.vacancies.map((vacancy) => ({ ...vacancy, kind: "vacancy", editor: "jobs" })), ...data.media.map((item) => ({ ...item, editor: commandOf(item.kind) }))].map((task) => (
            <li key={task.uuid} className="row" data-uuid={task.uuid}>
              <div>
                <h2 className="row__title">{task.title}</h2>
                <p className="card__meta">
                  <span className={`tag tag--${task.status}`}>{t(`status.${task.status}` as "status.draft")}</span>
                  <span>{kindLabel(texts, task.kind)}</span>
                  <span>{t("mine.updated", { date: texts.date(task.updatedAt) })}</span>
                </p>
                {(task.status === "returned" || task.status === "rejected") && task.reason !== ""
                  ? <p>{t("mine.reason", { reason: task.reason })}</p>
                  : null}
                {task.status === "returned" ? <p className="muted">{t("mine.returnedHint")}</p> : null}
              </div>
              <p className="row__actions">
                {task.status === "approved" ? <a href={href(`/p/${task.uuid}`, language)}>{t("mine.open", { title: task.title })}</a> : null}
                <a href={href(`/${task.editor}/${task.uuid}/edit`, language)} aria-label={t("mine.editLabel", { title: task.title })}>{t("mine.edit")}</a>
              </p>
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
