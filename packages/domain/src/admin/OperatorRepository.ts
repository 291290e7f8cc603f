import { RoleGrantRow, roleGrants, RoleGrantSource } from "../store/RoleGrants.js"

/**
 * `operators`: who holds the operator role, and whether it was granted by hand (the CLI or the
 * admin area: `cli`) or by `BIRZHA_OPERATORS` (`config`). Read and written only here, with the
 * statements every role of an address shares (store/RoleGrants.ts).
 */
const grants = roleGrants("operators")

export const OperatorSource = RoleGrantSource
export const OperatorRow = RoleGrantRow
export type OperatorRow = RoleGrantRow

/** Whether the (lower-cased) address holds the role. */
export const hasOperatorRow = grants.has
/** Grants the role; a grant by hand outlives the configured list. */
export const upsertOperator = grants.upsert
/** Removes the role; whether the address held it. */
export const deleteOperator = grants.remove
/** Removes the configured grants not in `keep`. */
export const deleteConfiguredOperatorsExcept = grants.removeConfiguredExcept
export const listOperatorRows = grants.list
