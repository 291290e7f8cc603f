import { Effect, FiberRef } from "effect"
import { type Actor, holdsScope, type KeyActor } from "../kernel/Authentication.js"
import { type CatalogEntry, currentOperation } from "../kernel/Operation.js"
import { ApprovalRequired, InsufficientScope, KeyHttpDisabled, KeyMcpDisabled, SessionRequired } from "./KeyErrors.js"

/**
 * Whether a key may run an operation, read from the operation's catalog entry alone, so a new
 * operation needs no code here. In order: the channel must be enabled on the key (`httpEnabled`
 * for HTTP, `mcpEnabled` for a tool call through /mcp), the operation must not be session-only, the key must hold one
 * of the operation's scopes, and an approval operation runs only through prepare/commit (`approved`
 * is for the commit of an approved prepared command).
 */
export const authorizeKey = (
  entry: CatalogEntry,
  key: KeyActor,
  options: { readonly channel: "http" | "mcp"; readonly approved?: boolean }
): Effect.Effect<void, KeyHttpDisabled | KeyMcpDisabled | SessionRequired | InsufficientScope | ApprovalRequired> => {
  if (options.channel === "http" && !key.httpEnabled) {
    return Effect.fail(new KeyHttpDisabled({ message: "HTTP API access is turned off for this key; turn it on at /settings/integrations" }))
  }
  if (options.channel === "mcp" && !key.mcpEnabled) {
    return Effect.fail(new KeyMcpDisabled({ message: "MCP access is turned off for this key; turn it on at /settings/integrations" }))
  }
  if (entry.sessionOnly) {
    return Effect.fail(new SessionRequired({ message: `${entry.id} is only available in a signed-in browser session, never to a key`, operation: entry.id }))
  }
  if (entry.scopes.length > 0 && !entry.scopes.some((scope) => key.scopes.includes(scope))) {
    return Effect.fail(new InsufficientScope({
      message: `${entry.id} needs the scope ${entry.scopes.join(" or ")}; this key does not hold it`,
      operation: entry.id,
      scopes: entry.scopes
    }))
  }
  if (entry.approval && options.approved !== true) {
    return Effect.fail(new ApprovalRequired({
      message: `${entry.id} needs the owner's approval: POST /api/v1/integration-commands/prepare with operationId and arguments, ` +
        "have the owner approve it at the returned approvalUrl, then commit it",
      operation: entry.id
    }))
  }
  return Effect.void
}

/** For handlers whose operation lists several scopes and narrows by input (publications.create by kind). */
export const requireScope = (actor: Actor, scope: string): Effect.Effect<void, InsufficientScope> =>
  holdsScope(actor, scope)
    ? Effect.void
    : Effect.flatMap(FiberRef.get(currentOperation), (entry) =>
      Effect.fail(new InsufficientScope({
        message: `This needs the scope ${scope}; this key does not hold it`,
        ...(entry === undefined ? {} : { operation: entry.id }),
        scopes: [scope]
      })))
