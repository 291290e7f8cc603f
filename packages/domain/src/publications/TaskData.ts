import { Schema } from "effect"
import { maxChars, minChars, strict } from "../kernel/Common.js"
import { FileMimeType } from "../files/File.js"

/** The spec's task categories. */
export const TaskCategory = Schema.Literal(
  "Сайты",
  "Картинки и видео",
  "Тексты и контент-редакторы",
  "Боты",
  "Автоматизация",
  "Аналитика",
  "Логотипы и графика",
  "ИИ-агенты",
  "Серверы и инфраструктура",
  "Другое"
).annotations({ identifier: "TaskCategory" })

/** The spec's attachment formats of a task file: the same list uploaded files accept. */
export const TaskFileMimeType = FileMimeType

export const maxTaskFileBytes = 1_048_576

const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const dataUrl = /^data:([a-z0-9.+-]+\/[a-z0-9.+-]+);base64,(.*)$/s

/** The bytes a strict base64 data URL holds, or undefined when it is not one (external, Blob, URL-encoded, malformed). */
export const decodedDataUrl = (url: string): { readonly mimeType: string; readonly bytes: number } | undefined => {
  const match = dataUrl.exec(url)
  if (match === null) return undefined
  const body = match[2]!
  if (!base64.test(body)) return undefined
  const padding = body.endsWith("==") ? 2 : body.endsWith("=") ? 1 : 0
  return { mimeType: match[1]!, bytes: (body.length / 4) * 3 - padding }
}

// Large enough for a 1 MiB file in base64 plus its header; the decoded size is checked exactly below.
const maxDataUrlLength = Math.ceil(maxTaskFileBytes / 3) * 4 + 200

/**
 * One attachment of a task (spec TaskFile): a strict base64 data URL whose MIME type is the
 * declared one and whose decoded length equals `size`. External and Blob URLs are refused.
 */
export const TaskFile = Schema.Struct({
  id: Schema.String.pipe(minChars(1), maxChars(100)),
  name: Schema.String.pipe(minChars(1), maxChars(240)),
  url: Schema.String.pipe(
    Schema.maxLength(maxDataUrlLength),
    Schema.filter((url) => decodedDataUrl(url) !== undefined, {
      message: () => "expected a data URL with a MIME type and base64 content (data:<type>;base64,...); other URLs are not accepted"
    })
  ).annotations({ jsonSchema: { type: "string", pattern: "^data:[a-z0-9.+-]+/[a-z0-9.+-]+;base64,", maxLength: maxDataUrlLength } }),
  size: Schema.Int.pipe(Schema.between(1, maxTaskFileBytes)),
  mimeType: TaskFileMimeType
}).pipe(
  Schema.filter((file) => {
    const decoded = decodedDataUrl(file.url)
    if (decoded === undefined) return true // reported by the url field
    if (decoded.mimeType !== file.mimeType) return `the data URL holds ${decoded.mimeType}, not the declared ${file.mimeType}`
    if (decoded.bytes !== file.size) return `the data URL holds ${decoded.bytes} bytes, not the declared size ${file.size}`
    return true
  })
).annotations({ identifier: "TaskFile", ...strict })
export type TaskFile = typeof TaskFile.Type

export const minSubmitDescription = 20

/** The whole draft of a task (spec TaskData): every field required, no others. */
export const TaskData = Schema.Struct({
  title: Schema.String.pipe(minChars(3), maxChars(160)),
  category: TaskCategory,
  description: Schema.String.pipe(maxChars(20000)),
  budget: Schema.String.pipe(maxChars(80)),
  deadline: Schema.String.pipe(maxChars(120)),
  files: Schema.Array(TaskFile).pipe(Schema.maxItems(5))
}).annotations({ identifier: "TaskData", ...strict })
export type TaskData = typeof TaskData.Type
