import { HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { FilePrepare, FileRecord, PreparedFile } from "./File.js"
import { InvalidFile, NotUploaded } from "./FileErrors.js"
import { NotFound, RequestConflict, wire } from "../kernel/ApiError.js"
import { authenticated } from "../kernel/Operation.js"

const FilePath = Schema.Struct({ uuid: Schema.UUID })

/**
 * Files: prepare, then PUT the raw bytes to the returned one-time `upload.url` (served by the
 * host, not an operation: it answers 404 not_found, 409 upload_used, 410 upload_expired,
 * 400 size_mismatch or content_mismatch), then complete. A ready file's bytes are read at its
 * `contentUrl`.
 */
export const FilesApi = HttpApiGroup.make("files", { topLevel: true })
  .add(
    authenticated("POST", "files.prepare", "/api/v1/files/uploads", {
      scopes: ["files:write"],
      summary: "Record a file of the acting profile and get a one-time upload address (PUT the raw bytes there, then complete)"
    }, [wire(InvalidFile), wire(RequestConflict)]).setPayload(FilePrepare).addSuccess(PreparedFile)
  )
  .add(
    authenticated("GET", "files.status", "/api/v1/files/:uuid", { scopes: ["files:read"], summary: "A file of the acting profile and its status" }, [wire(NotFound)])
      .setPath(FilePath)
      .addSuccess(FileRecord)
  )
  .add(
    authenticated("POST", "files.complete", "/api/v1/files/uploads/:uuid/complete", {
      scopes: ["files:write"],
      summary: "Make an uploaded file ready (emits file.ready); a ready file is returned again"
    }, [wire(NotFound), wire(NotUploaded)]).setPath(FilePath).addSuccess(FileRecord)
  )
  .annotate(OpenApi.Description, "Uploaded files: checked size and content, stored by the service; an external URL never becomes a file")
