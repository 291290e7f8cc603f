import { randomBytes } from "node:crypto"

const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

/** A legacy routing key (profile or publication `id`): 12 random lower-case letters and digits, stable for the record's life. */
export const newRoutingKey = (): string => Array.from(randomBytes(12), (byte) => alphabet[byte % alphabet.length]).join("")
