import { useState } from "react"
import { href } from "../../components/Layout.js"
import { LocalTime } from "../../components/LocalTime.js"
import { keyNameOf, operationSummary } from "../../components/format.js"
import { useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { MessageKey } from "../../i18n.js"
import type { ApprovalView } from "../../model.js"
import type { PageProps } from "../types.js"
import { changesOf, recordLine, shown } from "./approvalView.js"

export const title = ({ texts }: Pick<PageProps<"approval">, "texts">) => texts.t("approval.title")

const states = new Set(["pending", "approved", "denied", "running", "committed", "failed", "expired", "revoked"])

/**
 * One prepared command for its owner: what it does in the page's language, the record it touches
 * and the key that asks first, the decision right below, then the exact parameters. The decision is the API's (`integrationCommands.decide`,
 * same origin only); opening the page never decides anything.
 */
export default function ApprovalPage({ data, texts }: PageProps<"approval">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const { busy, message, run } = useAction()
  const [command, setCommand] = useState<ApprovalView>(data.command)
  const record = recordLine(texts, command)
  const changes = changesOf(command)
  const hasData = command.arguments["data"] !== undefined
  const decide = (decision: "approve" | "deny") =>
    void run(
      (api) => api["integrationCommands.decide"]({ path: { uuid: command.uuid }, payload: { decision } }),
      (answer) => {
        const decided = JSON.parse(JSON.stringify(answer.command)) as ApprovalView
        setCommand({ ...decided, key: { ...decided.key, ...(command.key.createdAt === undefined ? {} : { createdAt: command.key.createdAt }) } })
      }
    )
  const keyName = keyNameOf(texts, command.key.name)
  const stateKey = (states.has(command.state) ? `approval.state.${command.state}` : "approval.state.pending") as MessageKey
  return (
    <div className="approval">
      <h1>{t("approval.title")}</h1>
      <p className="lead">{t("approval.explain", { key: keyName })}</p>
      <section className="panel" aria-labelledby="what-heading">
        <h2 id="what-heading">{t("approval.what")}</h2>
        <p id="operation-summary" className="summary">{operationSummary(texts, command.operationId, command.summary)}</p>
        {command.also.map((other) => (
          <p key={other.operationId} className="also">{t("approval.also")}: {operationSummary(texts, other.operationId, other.summary)}</p>
        ))}
        {record === undefined ? null : (
          <p id="record">{record.heading}{record.heading === "" ? "" : ": "}«<span id="record-title">{record.title}</span>»</p>
        )}
        <dl className="facts facts--inline">
          <div>
            <dt>{t("approval.key")}</dt>
            <dd><span id="command-key">{keyName}</span>{command.key.createdAt === undefined ? null : (
              <span id="key-made" className="muted">{" · "}{t("approval.keyMade", { date: texts.date(command.key.createdAt) })}</span>
            )}</dd>
          </div>
          <div><dt>{t("approval.expires")}</dt><dd><LocalTime value={command.expiresAt} texts={texts} relative={command.state === "pending"} id="command-expires" /></dd></div>
          <div><dt>{t("approval.state")}</dt><dd id="command-state" data-state={command.state}>{t(stateKey)}</dd></div>
          {command.decidedAt === undefined ? null : (
            <>
              <div><dt>{t("approval.decidedBy")}</dt><dd id="decided-by">{t("approval.you", { email: data.email })}</dd></div>
              <div><dt>{t("approval.decidedAt")}</dt><dd><LocalTime value={command.decidedAt} texts={texts} id="decided-at" /></dd></div>
            </>
          )}
        </dl>
        {command.state === "pending"
          ? (
            <div className="actions">
              <button type="button" id="approve" className="button" disabled={!hydrated || busy} onClick={() => decide("approve")}>{t("approval.approve")}</button>
              <button type="button" id="deny" className="button button--secondary" disabled={!hydrated || busy} onClick={() => decide("deny")}>{t("approval.deny")}</button>
            </div>
          )
          : null}
        <p id="status" role="status" aria-live="polite" className="status">{message === undefined ? "" : t(message)}</p>
      </section>
      {!hasData ? null : changes.length === 0
        ? <p id="changes">{t("approval.noChanges")}</p>
        : (
          <div className="table-scroll">
            <table id="changes" className="diff">
              <caption>{t("approval.changes")}</caption>
              <thead><tr><th scope="col">{t("approval.field")}</th><th scope="col">{t("approval.now")}</th><th scope="col">{t("approval.proposed")}</th></tr></thead>
              <tbody>
                {changes.map((change) => (
                  <tr key={change.name}><th scope="row"><code>{change.name}</code></th><td><del>{change.now}</del></td><td><ins>{change.proposed}</ins></td></tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      <h2>{t("approval.parameters")}</h2>
      <dl className="facts" id="parameters">
        <div><dt>{t("approval.operation")}</dt><dd><code id="operation-id">{command.operationId}</code></dd></div>
        {Object.entries(command.arguments).map(([name, value]) => (
          <div key={name}><dt><code>{name}</code></dt><dd><code className="wrap">{shown(value)}</code></dd></div>
        ))}
      </dl>
      <h2>{t("approval.raw")}</h2>
      <pre id="raw-arguments" className="raw">{JSON.stringify(command.arguments, null, 2)}</pre>
      <p><a href={href("/approvals", language)}>{t("approval.toList")}</a></p>
    </div>
  )
}
