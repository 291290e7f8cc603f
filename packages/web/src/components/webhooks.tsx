import { useState } from "react"
import type { MessageKey, Texts } from "../i18n.js"
import type { WebhookDeliveryView, WebhookEndpointView } from "../model.js"

// What the webhook pages share (pages/WebhooksPage, pages/WebhookPage): states in words, event
// type labels, and the signing secret shown once with verification code for common receivers.

/** An event type as this application names it (`event.<type>`, as the event log says it), else the type itself. */
export const eventTypeLabel = (texts: Texts, type: string) => {
  if (type === "*") return texts.t("hooks.allEvents")
  const key = `event.${type}` as MessageKey
  const said = texts.t(key)
  return said === key ? type : said
}

export const endpointStateLabel = (texts: Texts, state: WebhookEndpointView["state"]) => texts.t(`hooks.state.${state}` as MessageKey)

export const deliveryStatusLabel = (texts: Texts, status: WebhookDeliveryView["status"]) => texts.t(`hooks.status.${status}` as MessageKey)

/** The receiver's answer in words: its HTTP status, or that none came (with the worker's reason). */
export const answerLabel = (texts: Texts, attempt: { readonly statusCode?: number; readonly error?: string }) =>
  attempt.statusCode === undefined ? texts.t("hooks.noAnswer") : texts.t("hooks.answered", { code: attempt.statusCode })

/**
 * Verification code for common receivers. Each uses its language's Standard Webhooks library,
 * which checks what the worker signs (packages/domain/src/webhooks/SigningSecret.ts): HMAC-SHA256
 * of `webhook-id.webhook-timestamp.body`, any one of the `v1,` signatures (two during a rotation),
 * the timestamp within 5 minutes. The secret comes from the environment, never from the code.
 */
export const verificationSnippets: ReadonlyArray<{ readonly id: string; readonly name: string; readonly install: string; readonly code: string }> = [
  {
    id: "node",
    name: "Node.js",
    install: "npm install standardwebhooks express",
    code: `import express from "express"
import { Webhook } from "standardwebhooks"

const webhook = new Webhook(process.env.BIRZHA_WEBHOOK_SECRET)
const seen = new Set()

express()
  .post("/hook", express.raw({ type: "application/json" }), (req, res) => {
    let event
    try {
      event = webhook.verify(req.body, req.headers)
    } catch {
      return res.sendStatus(400)
    }
    if (!seen.has(event.uuid)) {
      seen.add(event.uuid)
      // handle event.type, event.data
    }
    res.sendStatus(204)
  })
  .listen(3000)`
  },
  {
    id: "python",
    name: "Python",
    install: "pip install standardwebhooks flask",
    code: `import os
from flask import Flask, request
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

webhook = Webhook(os.environ["BIRZHA_WEBHOOK_SECRET"])
app = Flask(__name__)

@app.post("/hook")
def hook():
    try:
        event = webhook.verify(request.get_data(), dict(request.headers))
    except WebhookVerificationError:
        return "", 400
    # deduplicate by event["uuid"], then handle event["type"], event["data"]
    return "", 204`
  },
  {
    id: "go",
    name: "Go",
    install: "go get github.com/standard-webhooks/standard-webhooks/libraries/go",
    code: `package main

import (
	"io"
	"net/http"
	"os"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func main() {
	wh, err := standardwebhooks.NewWebhook(os.Getenv("BIRZHA_WEBHOOK_SECRET"))
	if err != nil {
		panic(err)
	}
	http.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		payload, err := io.ReadAll(r.Body)
		if err != nil || wh.Verify(payload, r.Header) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		// deduplicate by the webhook-id header, then handle the event
		w.WriteHeader(http.StatusNoContent)
	})
	http.ListenAndServe(":3000", nil)
}`
  }
]

/** How a receiver checks a delivery, in words, and the code for each common receiver. */
export const VerificationGuide = ({ texts, open = false }: { readonly texts: Texts; readonly open?: boolean }) => {
  const { t } = texts
  return (
    <details className="webhook-verify" id="verify-guide" open={open}>
      <summary>{t("hooks.verifyTitle")}</summary>
      <p>{t("hooks.verifyExplain")}</p>
      <ul className="webhook-verify__rules">
        <li>{t("hooks.verifyHeaders")}</li>
        <li>{t("hooks.verifyRotation")}</li>
        <li>{t("hooks.verifyWindow")}</li>
        <li>{t("hooks.verifyDedupe")}</li>
      </ul>
      {verificationSnippets.map((snippet) => (
        <section key={snippet.id} className="webhook-snippet" aria-labelledby={`snippet-${snippet.id}`}>
          <h3 id={`snippet-${snippet.id}`}>{snippet.name}</h3>
          <pre className="raw"><code>{snippet.install}</code></pre>
          <pre className="raw" id={`snippet-${snippet.id}-code`}><code>{snippet.code}</code></pre>
        </section>
      ))}
    </details>
  )
}

/**
 * A signing secret, shown this once (the answer of webhooks.create or webhooks.rotate: the browser
 * keeps it nowhere, the server never renders it), with a copy button and the verification code.
 */
export const SecretBox = ({ texts, secret, rotated, onDone }: {
  readonly texts: Texts
  readonly secret: string
  readonly rotated: boolean
  readonly onDone: () => void
}) => {
  const { t } = texts
  const [copied, setCopied] = useState<MessageKey | undefined>(undefined)
  const copy = () => {
    setCopied(undefined)
    void (navigator.clipboard?.writeText(secret) ?? Promise.reject(new Error("no clipboard")))
      .then(() => setCopied("keys.copied"), () => setCopied("keys.copyFailed"))
  }
  return (
    <section id="secret-box" className="panel" aria-labelledby="secret-heading">
      <h2 id="secret-heading">{t("hooks.secretTitle")}</h2>
      <p id="shown-once"><strong>{t("keys.shownOnce")}</strong></p>
      <p>{t(rotated ? "hooks.secretRotated" : "hooks.secretExplain")}</p>
      <p><code id="secret-value" className="wrap secret">{secret}</code></p>
      <div className="actions">
        <button type="button" id="secret-copy" className="button button--secondary" onClick={copy}>{t("integrations.copy")}</button>
        <button type="button" id="secret-done" className="button" onClick={onDone}>{t("integrations.secretDone")}</button>
      </div>
      <p id="copy-status" role="status" aria-live="polite" className="muted">{copied === undefined ? "" : t(copied)}</p>
      <VerificationGuide texts={texts} open />
    </section>
  )
}
