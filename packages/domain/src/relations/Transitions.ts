import type { EventType } from "../events/EventType.js"

/**
 * The relation kinds: one record, one table, one transition engine. Events name
 * `job_contact` for both job kinds (the event catalog's aggregate kind).
 */
export const relationKinds = ["response", "offer", "deal", "job_response", "job_invitation"] as const
export type RelationKind = typeof relationKinds[number]

export const statusesOf = {
  response: ["pending", "shortlisted", "accepted", "declined", "withdrawn"],
  offer: ["pending", "accepted", "declined", "withdrawn"],
  deal: ["active", "results_submitted", "completed", "terminated"],
  job_response: ["applied", "accepted", "declined", "withdrawn"],
  job_invitation: ["invited", "accepted", "declined", "withdrawn"]
} as const satisfies Record<RelationKind, ReadonlyArray<string>>
export type RelationStatus = typeof statusesOf[RelationKind][number]

/** The state a relation of each kind is created in. */
export const initialStatus = {
  response: "pending",
  offer: "pending",
  deal: "active",
  job_response: "applied",
  job_invitation: "invited"
} as const satisfies Record<RelationKind, RelationStatus>

/** The statuses from which a relation is still open (deleting a party closes it). */
export const openStatuses: Record<RelationKind, ReadonlyArray<RelationStatus>> = {
  response: ["pending", "shortlisted"],
  offer: ["pending"],
  deal: ["active", "results_submitted"],
  job_response: ["applied"],
  job_invitation: ["invited"]
}

export type Role = "customer" | "contractor" | "employer" | "candidate"

export const otherRole = (role: Role): Role =>
  role === "customer" ? "contractor" : role === "contractor" ? "customer" : role === "employer" ? "candidate" : "employer"

/** The aggregate kind of a relation's events (and of the event catalog). */
export const aggregateKindOf = (kind: RelationKind): "response" | "offer" | "deal" | "job_contact" =>
  kind === "job_response" || kind === "job_invitation" ? "job_contact" : kind

/** The relation kinds each operation family reads and changes (another kind's uuid answers 404). */
export const familyKinds = {
  responses: ["response"],
  offers: ["offer"],
  deals: ["deal"],
  job_contacts: ["job_response", "job_invitation"]
} as const satisfies Record<string, ReadonlyArray<RelationKind>>
export type Family = keyof typeof familyKinds

/**
 * Who may make a transition: a role, a side (the party that created the relation, or the other),
 * or either party.
 */
export type TransitionActor = Role | "initiator" | "recipient" | "either"

/** What a transition does besides the status change, written once in the engine. */
export type TransitionEffect = "start_deal" | "submit_results" | "reopen" | "complete"

/** One row of a kind's process: operation (with its `status` input where it takes one), from, to, who, events. */
interface TransitionRow<Operation extends string> {
  readonly kind: RelationKind
  readonly operation: Operation
  /** The `status` input selecting this row (responses.status, job_contacts.status). */
  readonly input?: string
  readonly from: ReadonlyArray<RelationStatus>
  readonly to: RelationStatus
  readonly by: TransitionActor
  /** The relation's own event; the engine adds `deal.started` for `start_deal`. */
  readonly event: EventType
  readonly effect?: TransitionEffect
}

/** Keeps each row's operation id as its literal type, so the table itself names the transition operations. */
const row = <const Operation extends string>(transition: TransitionRow<Operation>): TransitionRow<Operation> => transition

/**
 * The processes as data, Sharetribe's process.edn in TypeScript. System
 * transitions (auto-complete, a party's deletion, the referenced response of an accepted offer)
 * are in `systemTransitions`: no caller makes them.
 */
const table = [
  // 2.1 Response: customer = the task owner (recipient), contractor = the responder (initiator).
  row({ kind: "response", operation: "responses.status", input: "shortlisted", from: ["pending"], to: "shortlisted", by: "customer", event: "response.status_changed" }),
  row({ kind: "response", operation: "responses.status", input: "accepted", from: ["pending", "shortlisted"], to: "accepted", by: "customer", event: "response.status_changed", effect: "start_deal" }),
  row({ kind: "response", operation: "responses.status", input: "declined", from: ["pending", "shortlisted"], to: "declined", by: "customer", event: "response.status_changed" }),
  row({ kind: "response", operation: "responses.withdraw", from: ["pending", "shortlisted"], to: "withdrawn", by: "contractor", event: "response.withdrawn" }),
  // 2.2 Offer: the recipient answers, the sender may withdraw.
  row({ kind: "offer", operation: "offers.accept", from: ["pending"], to: "accepted", by: "recipient", event: "offer.status_changed", effect: "start_deal" }),
  row({ kind: "offer", operation: "offers.decline", from: ["pending"], to: "declined", by: "recipient", event: "offer.status_changed" }),
  row({ kind: "offer", operation: "offers.withdraw", from: ["pending"], to: "withdrawn", by: "initiator", event: "offer.withdrawn" }),
  // 2.3 Deal (Upwork's contract).
  row({ kind: "deal", operation: "deals.results", from: ["active", "results_submitted"], to: "results_submitted", by: "contractor", event: "deal.status_changed", effect: "submit_results" }),
  row({ kind: "deal", operation: "deals.request_changes", from: ["results_submitted"], to: "active", by: "customer", event: "deal.status_changed", effect: "reopen" }),
  row({ kind: "deal", operation: "deals.complete", from: ["active", "results_submitted"], to: "completed", by: "customer", event: "deal.status_changed", effect: "complete" }),
  row({ kind: "deal", operation: "deals.terminate", from: ["active", "results_submitted"], to: "terminated", by: "either", event: "deal.status_changed" }),
  // 2.4 Job contacts: a response to a vacancy (candidate initiates) and an invitation by resume (employer initiates).
  row({ kind: "job_response", operation: "job_contacts.status", input: "accepted", from: ["applied"], to: "accepted", by: "employer", event: "job_response.status_changed" }),
  row({ kind: "job_response", operation: "job_contacts.status", input: "declined", from: ["applied"], to: "declined", by: "employer", event: "job_response.status_changed" }),
  row({ kind: "job_response", operation: "job_contacts.status", input: "withdrawn", from: ["applied"], to: "withdrawn", by: "candidate", event: "job_response.withdrawn" }),
  row({ kind: "job_invitation", operation: "job_contacts.status", input: "accepted", from: ["invited"], to: "accepted", by: "candidate", event: "job_invitation.status_changed" }),
  row({ kind: "job_invitation", operation: "job_contacts.status", input: "declined", from: ["invited"], to: "declined", by: "candidate", event: "job_invitation.status_changed" }),
  row({ kind: "job_invitation", operation: "job_contacts.status", input: "withdrawn", from: ["invited"], to: "withdrawn", by: "employer", event: "job_invitation.withdrawn" })
]

/** The operation ids that change a relation's state: those of the table's rows, and no others. */
export type TransitionOperation = typeof table[number]["operation"]

export type Transition = TransitionRow<TransitionOperation>

export const transitions: ReadonlyArray<Transition> = table

/** The event each kind's creation emits. */
export const createdEvent = {
  response: "response.received",
  offer: "offer.received",
  deal: "deal.started",
  job_response: "job_response.received",
  job_invitation: "job_invitation.received"
} as const satisfies Record<RelationKind, EventType>

/**
 * Transitions no caller makes: the referenced response of an accepted
 * offer; results left unanswered for 14 days; the task closed or deleted; a party's account deleted (pending ones withdrawn
 * by their initiator's deletion or declined by their recipient's, deals terminated).
 */
export const systemTransitions = {
  referencedResponseAccepted: { kind: "response", from: ["pending", "shortlisted"], to: "accepted", event: "response.status_changed" },
  autoComplete: { kind: "deal", from: ["results_submitted"], to: "completed", event: "deal.status_changed" },
  taskClosed: { kind: "response", from: ["pending", "shortlisted"], to: "declined", event: "response.status_changed" }
} as const

/** The status a party's deletion leaves an open relation in, and its event. */
export const closedByDeletion = (kind: RelationKind, deletedIsInitiator: boolean): { readonly to: RelationStatus; readonly event: EventType } => {
  switch (kind) {
    case "response":
      return deletedIsInitiator ? { to: "withdrawn", event: "response.withdrawn" } : { to: "declined", event: "response.status_changed" }
    case "offer":
      return deletedIsInitiator ? { to: "withdrawn", event: "offer.withdrawn" } : { to: "declined", event: "offer.status_changed" }
    case "deal":
      return { to: "terminated", event: "deal.status_changed" }
    case "job_response":
      return deletedIsInitiator ? { to: "withdrawn", event: "job_response.withdrawn" } : { to: "declined", event: "job_response.status_changed" }
    case "job_invitation":
      return deletedIsInitiator ? { to: "withdrawn", event: "job_invitation.withdrawn" } : { to: "declined", event: "job_invitation.status_changed" }
  }
}

/** The `status` values an operation accepts as input (400 otherwise). */
export const statusInputs = (operation: TransitionOperation): ReadonlyArray<string> =>
  [...new Set(transitions.filter((t) => t.operation === operation && t.input !== undefined).map((t) => t.input!))]

/** Whether a party (by role and side) may make transitions performed `by`. */
export const actorMatches = (by: TransitionActor, party: { readonly role: Role; readonly side: "initiator" | "recipient" }): boolean =>
  by === "either" || by === party.role || by === party.side

/** The rows of one operation for one kind (and `status` input where the operation takes one). */
export const rowsFor = (kind: RelationKind, operation: TransitionOperation, input?: string): ReadonlyArray<Transition> =>
  transitions.filter((t) => t.kind === kind && t.operation === operation && (t.input === undefined || t.input === input))

/**
 * The operation ids this party may call now on a relation in `status`: every transition whose
 * kind, actor and source state match. The UI's buttons and an agent's next steps, and the test
 * oracle (it must equal the set of calls that succeed).
 */
export const allowedActions = (
  kind: RelationKind,
  status: string,
  party: { readonly role: Role; readonly side: "initiator" | "recipient" }
): ReadonlyArray<TransitionOperation> =>
  [...new Set(
    transitions
      .filter((t) => t.kind === kind && actorMatches(t.by, party) && (t.from as ReadonlyArray<string>).includes(status))
      .map((t) => t.operation)
  )]
