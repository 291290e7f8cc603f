import { FilesApi } from "./FilesApi.js"
import { implementWith } from "../operations/Implementation.js"
import { PublicOrigin } from "../operations/PublicOrigin.js"
import { completeFile, fileStatus, prepareFile } from "./Files.js"

/** files.prepare, files.status and files.complete; the bytes travel on the host's own routes. */
export const FilesOperations = implementWith(FilesApi, PublicOrigin)((publicOrigin) => ({
  "files.prepare": ({ payload }, actor) => prepareFile(actor, payload, publicOrigin),
  "files.status": ({ path }, actor) => fileStatus(actor, path.uuid, publicOrigin),
  "files.complete": ({ path }, actor) => completeFile(actor, path.uuid, publicOrigin)
}))
