import type { BirzhaClient } from "@birzha/client"
import { Effect } from "effect"
import { plain, uuidPattern } from "../components/json.js"
import type { AgentItem, ConsentView, PageData } from "../model.js"

/**
 * MCP authorization's pages: the consent page an agent's sign-in lands on
 * (`/oauth/consent/<uuid>`, made by the host's GET /oauth/authorize) and the connected agents
 * (`/settings/agents`). Signed-in only: signed out, the visitor signs in and comes back here.
 */
export const agentsPage = (path: string): ((client: BirzhaClient) => Effect.Effect<PageData, unknown>) | undefined => {
  if (path === "/settings/agents") {
    return (client) =>
      Effect.map(client["agents.list"](), (list): PageData => ({ page: "agents", items: list.items.map((item) => plain(item) as unknown as AgentItem) }))
  }
  const prefix = "/oauth/consent/"
  if (path.startsWith(prefix) && uuidPattern.test(path.slice(prefix.length))) {
    const uuid = path.slice(prefix.length)
    return (client) =>
      Effect.map(
        Effect.all({ found: client["oauthRequests.get"]({ path: { uuid } }), session: client["auth.session"]() }, { concurrency: "unbounded" }),
        ({ found, session }): PageData => ({ page: "oauthConsent", request: plain(found.request) as unknown as ConsentView, email: session.user.email })
      )
  }
  return undefined
}
