import { href } from "../../components/Layout.js"
import { labelOf } from "../../components/learning.js"
import { TeachingHeader } from "../../components/teaching.js"
import type { AnalyticsCell } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"teachingAnalytics">, "data" | "texts">) => `${texts.t("teaching.analytics.title")} · ${data.course.courseTitle}`

type Texts = PageProps<"teachingAnalytics">["texts"]

/** A count as a bar and its figure; a suppressed one says so instead (too few learners to show). */
const Bar = ({ cell, max, label, texts, minCell }: { readonly cell: AnalyticsCell; readonly max: number; readonly label: string; readonly texts: Texts; readonly minCell: number }) => {
  if (cell.suppressed || cell.count === undefined) {
    return <span className="suppressed">{texts.t("teaching.analytics.suppressed", { n: minCell })}</span>
  }
  return (
    <span className="bar">
      <meter min={0} max={Math.max(max, 1)} value={cell.count} aria-label={label} />
      <span>{texts.number(cell.count)}</span>
    </span>
  )
}

const maxOf = (cells: ReadonlyArray<AnalyticsCell>) => Math.max(0, ...cells.map((cell) => cell.count ?? 0))

/** The course's analytics: the progress funnel, the score distribution, each step's completion and the graders' load; small cells suppressed, visibly. */
export default function TeachingAnalyticsPage({ data, texts }: PageProps<"teachingAnalytics">) {
  const { t } = texts
  const a = data.analytics
  const funnelMax = maxOf(a.funnel.map((row) => row.cell))
  const scoresMax = maxOf(a.scores.map((row) => row.learners))
  const stepsMax = maxOf(a.steps.flatMap((row) => [row.started, row.completed]))
  return (
    <div className="analytics">
      <TeachingHeader course={data.course} texts={texts} current="analytics">{t("teaching.analytics.title")}: {data.course.courseTitle}</TeachingHeader>
      <p><a href={href(`/teaching/${data.course.courseUuid}/exports`, texts.language)}>{t("authmore.exports.link")}</a></p>
      <p className="hint">{t("teaching.analytics.hint", { n: a.minCell })}</p>
      <section aria-labelledby="funnel">
        <h2 id="funnel">{t("teaching.analytics.funnel")}</h2>
        <dl className="chart">
          {a.funnel.map((row) => {
            const label = labelOf(texts, "teaching.analytics.stage", row.stage)
            return <div key={row.stage}><dt>{label}</dt><dd><Bar cell={row.cell} max={funnelMax} label={label} texts={texts} minCell={a.minCell} /></dd></div>
          })}
        </dl>
      </section>
      <section aria-labelledby="scores">
        <h2 id="scores">{t("teaching.analytics.scores")}</h2>
        {a.scores.length === 0 ? <p>{t("teaching.analytics.none")}</p> : (
          <dl className="chart">
            {a.scores.map((row) => (
              <div key={row.bucket}><dt>{row.bucket}</dt><dd><Bar cell={row.learners} max={scoresMax} label={t("teaching.analytics.bucket", { bucket: row.bucket })} texts={texts} minCell={a.minCell} /></dd></div>
            ))}
          </dl>
        )}
      </section>
      <section aria-labelledby="steps">
        <h2 id="steps">{t("teaching.analytics.steps")}</h2>
        {a.steps.length === 0 ? <p>{t("teaching.analytics.none")}</p> : (
          <div className="table-scroll">
            <table className="diff">
              <thead><tr><th scope="col">{t("teaching.regrade.step")}</th><th scope="col">{t("teaching.analytics.started")}</th><th scope="col">{t("teaching.analytics.completed")}</th></tr></thead>
              <tbody>
                {a.steps.map((row, index) => (
                  <tr key={index}>
                    <th scope="row">{row.title}</th>
                    <td><Bar cell={row.started} max={stepsMax} label={`${row.title}: ${t("teaching.analytics.started")}`} texts={texts} minCell={a.minCell} /></td>
                    <td><Bar cell={row.completed} max={stepsMax} label={`${row.title}: ${t("teaching.analytics.completed")}`} texts={texts} minCell={a.minCell} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section aria-labelledby="load">
        <h2 id="load">{t("teaching.analytics.load")}</h2>
        {a.graderLoad.length === 0 ? <p>{t("teaching.analytics.none")}</p> : (
          <div className="table-scroll">
            <table className="diff">
              <thead><tr><th scope="col">{t("teaching.analytics.reviewer")}</th><th scope="col">{t("teaching.analytics.pending")}</th><th scope="col">{t("teaching.analytics.decided")}</th></tr></thead>
              <tbody>
                {a.graderLoad.map((row, index) => (
                  <tr key={index}><th scope="row">{row.name}</th><td>{texts.number(row.pending)}</td><td>{texts.number(row.decided)}</td></tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </div>
  )
}
