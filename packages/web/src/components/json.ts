// What the page loaders (server/*.ts) and the pages' views of API answers share.

/** An API answer as plain JSON. */
export type Json = Record<string, any>

/** The decoded answer as plain JSON (dates as ISO strings), the same on the server and in the browser. */
export const plain = <A>(value: A): Json => JSON.parse(JSON.stringify(value)) as Json

/** `{ [key]: value }`, or nothing when the value is absent (a view's optional field). */
export const optional = <K extends string>(key: K, value: unknown): { readonly [P in K]?: any } =>
  value === undefined || value === null ? {} : { [key]: value } as { [P in K]: any }

/** A uuid as a path segment carries it (either case). */
export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
