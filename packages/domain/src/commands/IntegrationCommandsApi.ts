import { HttpApiGroup, OpenApi } from "@effect/platform"
import {
  ApprovalNotRequired,
  ApprovalPending,
  CommandDenied,
  CommandExpired,
  CommandFailed,
  CommandInProgress,
  IntegrationCommandAnswer,
  IntegrationCommandPath,
  IntegrationCommandPrepare,
  OwnerCommandAnswer,
  OwnerCommandList,
  OwnerDecision
} from "./IntegrationCommand.js"
import { NotFound, wire } from "../kernel/ApiError.js"
import { authenticated } from "../kernel/Operation.js"

/**
 * The approval flow for bearer clients (spec "Approval flow for bearer clients"). The spec names
 * the routes but not their ids; ours are `integrationCommands.prepare` and `.commit`. Any key may
 * call them: prepare checks the key against the prepared operation's own scopes, commit runs it
 * through the same route and authorization as a direct call.
 */
export const IntegrationCommandsApi = HttpApiGroup.make("integrationCommands", { topLevel: true })
  .add(
    authenticated("POST", "integrationCommands.prepare", "/api/v1/integration-commands/prepare", {
      specId: null,
      keyOnly: true,
      summary: "Prepare an approval-flagged operation for the owner's approval; answers the command with its approvalUrl and expiry"
    }, [wire(ApprovalNotRequired)]).setPayload(IntegrationCommandPrepare).addSuccess(IntegrationCommandAnswer)
  )
  .add(
    authenticated("POST", "integrationCommands.commit", "/api/v1/integration-commands/:uuid/commit", {
      specId: null,
      keyOnly: true,
      summary: "Run an approved prepared command once, by the key that prepared it; a repeated commit answers the same result"
    }, [wire(NotFound), wire(ApprovalPending), wire(CommandDenied), wire(CommandExpired), wire(CommandFailed), wire(CommandInProgress)])
      .setPath(IntegrationCommandPath)
      .addSuccess(IntegrationCommandAnswer)
  )
  // The owner's side (ours, not the spec's): the approval pages read and decide through these, in a
  // browser session only; a decision, as every change made with the cookie, needs the service's Origin.
  .add(
    authenticated("GET", "integrationCommands.pending", "/api/v1/integration-commands", {
      extension: true,
      sessionOnly: true,
      summary: "The account's prepared commands waiting for its decision, soonest expiry first (at most 100)"
    }, []).addSuccess(OwnerCommandList)
  )
  .add(
    authenticated("GET", "integrationCommands.get", "/api/v1/integration-commands/:uuid", {
      extension: true,
      sessionOnly: true,
      summary: "A prepared command of the account as its owner decides on it: what will run, which key asks, the record it touches"
    }, [wire(NotFound)])
      .setPath(IntegrationCommandPath)
      .addSuccess(OwnerCommandAnswer)
  )
  .add(
    authenticated("POST", "integrationCommands.decide", "/api/v1/integration-commands/:uuid/decide", {
      extension: true,
      sessionOnly: true,
      sameOrigin: true,
      summary: "The owner approves or denies a pending command; a command no longer pending is answered as it stands"
    }, [wire(NotFound)])
      .setPath(IntegrationCommandPath)
      .setPayload(OwnerDecision)
      .addSuccess(OwnerCommandAnswer)
  )
  .annotate(OpenApi.Description, "Prepare and commit operations that need the owner's approval")
