import { AdminTabs, Figure } from "../../components/admin.js"
import { LocalTime } from "../../components/LocalTime.js"
import type { PageProps } from "../types.js"

export const title = ({ texts }: Pick<PageProps<"adminHealth">, "texts">) => texts.t("admin.health.title")

/**
 * The service's health at a glance, for operators: readiness, the event sequencer's lag, the
 * queues, and what needs a person (failing webhook endpoints, suspended checkers).
 */
export default function AdminHealthPage({ data, texts }: PageProps<"adminHealth">) {
  const { t } = texts
  const { health } = data
  const ready = health.readiness.database && health.readiness.migrations
  return (
    <div>
      <h1>{t("admin.health.title")}</h1>
      <AdminTabs current="health" texts={texts} />
      <p className={ready ? "admin-verdict" : "admin-verdict admin-verdict--alert"} id="admin-readiness">
        {ready ? t("admin.health.ready") : t("admin.health.notReady")}
      </p>
      <section aria-labelledby="admin-queues">
        <h2 id="admin-queues">{t("admin.health.queues")}</h2>
        <dl className="admin-figures">
          <Figure label={t("admin.health.database")} value={health.readiness.database ? t("admin.health.ok") : t("admin.health.down")} alert={!health.readiness.database} />
          <Figure label={t("admin.health.migrations")} value={health.readiness.migrations ? t("admin.health.applied") : t("admin.health.pending")} alert={!health.readiness.migrations} />
          <Figure label={t("admin.health.outbox")} value={health.events.outboxDepth} alert={health.events.outboxDepth > 0 && health.events.sequencingLagSeconds > 60} />
          <Figure label={t("admin.health.lag")} value={t("admin.health.seconds", { n: Math.round(health.events.sequencingLagSeconds) })} alert={health.events.sequencingLagSeconds > 60} />
          <Figure label={t("admin.health.deliveriesPending")} value={health.webhookDeliveries.pending} />
          <Figure label={t("admin.health.deliveriesFailed")} value={health.webhookDeliveries.failed} alert={health.webhookDeliveries.failed > 0} />
          <Figure label={t("admin.health.jobsQueued")} value={health.gradingJobs.queued} />
          <Figure label={t("admin.health.jobsRunning")} value={health.gradingJobs.running} />
          <Figure label={t("admin.health.jobsFailed")} value={health.gradingJobs.failed} alert={health.gradingJobs.failed > 0} />
        </dl>
      </section>
      <section aria-labelledby="admin-endpoints">
        <h2 id="admin-endpoints">{t("admin.health.endpoints")}</h2>
        {health.failingEndpoints.length === 0 ? <p>{t("admin.health.noEndpoints")}</p> : (
          <ul className="rows">
            {health.failingEndpoints.map((endpoint) => (
              <li key={endpoint.uuid} className="row row--stacked">
                <p className="row__title wrap">{endpoint.host === "" ? endpoint.uuid : endpoint.host}</p>
                <p className="card__meta">
                  <span className={endpoint.state === "disabled" ? "tag tag--warning" : "tag"}>{t(endpoint.state === "disabled" ? "admin.health.endpointDisabled" : "admin.health.endpointFailing")}</span>
                  {endpoint.failingSince === undefined ? null : <span>{t("admin.health.failingSince")} <LocalTime value={endpoint.failingSince} texts={texts} /></span>}
                  <span>{t("admin.health.endpointPending", { n: endpoint.pendingDeliveries })}</span>
                </p>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="admin-checkers">
        <h2 id="admin-checkers">{t("admin.health.checkers")}</h2>
        {health.suspendedCheckers.length === 0 ? <p>{t("admin.health.noCheckers")}</p> : (
          <ul className="rows">
            {health.suspendedCheckers.map((checker) => (
              <li key={checker.uuid} className="row row--stacked">
                <p className="row__title wrap">{checker.name === "" ? checker.uuid : checker.name}</p>
                <p className="card__meta">
                  <span>{checker.courseTitle}</span>
                  <span className="tag tag--warning">{t(checker.automatic ? "admin.health.suspendedAutomatically" : "admin.health.suspendedByStaff")}</span>
                  <span><LocalTime value={checker.suspendedAt} texts={texts} /></span>
                </p>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  )
}
