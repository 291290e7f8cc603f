/**
 * The browser build's stand-in for `node:crypto`, `node:fs` and `node:zlib`: `@birzha/client`
 * takes the API's declarations from the domain package, whose modules beside them (repositories,
 * secrets) import Node's built-ins at the top. Nothing the client runs calls these; the bundler
 * only needs the names to exist, and drops what no code reaches.
 */
const unavailable = (name: string) => (): never => {
  throw new Error(`${name} is not available in the browser`)
}
export const createCipheriv = unavailable("createCipheriv")
export const createDecipheriv = unavailable("createDecipheriv")
export const createHash = unavailable("createHash")
export const createHmac = unavailable("createHmac")
export const deflateSync = unavailable("deflateSync")
export const hkdfSync = unavailable("hkdfSync")
export const randomBytes = unavailable("randomBytes")
export const randomInt = unavailable("randomInt")
export const randomUUID = unavailable("randomUUID")
export const readFileSync = unavailable("readFileSync")
export const timingSafeEqual = unavailable("timingSafeEqual")
