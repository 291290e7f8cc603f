import { Schema } from "effect"
import { type ApiErrorClass, InvalidPublication, InvalidTask } from "../kernel/ApiError.js"
import { codePoints, optionalField } from "../kernel/Common.js"
import { ownerCommandsGroup, type OwnerOperation, ownerOperations, saveInput } from "./OwnerCommandsApi.js"
import type { EventType } from "../events/EventType.js"
import { ArticleData, PortfolioData, referencedFiles, ResumeData, ServiceData, TrainingData, VacancyData } from "./MediaData.js"
import { OwnTask, ownPublication, type PublicationKind } from "./Publication.js"
import { minSubmitDescription, TaskData } from "./TaskData.js"

/** What a row states about one kind; everything else about it is derived (`kindOf`). */
interface KindRow<
  K extends PublicationKind,
  C extends string,
  A,
  I,
  OA,
  OI,
  E extends InvalidTask | InvalidPublication,
  EI,
  Extra extends Schema.Struct.Fields,
  Ops extends ReadonlyArray<OwnerOperation>,
  Closed extends EventType | null
> {
  /** The spec's kind id (`Publication.kind`). */
  readonly kind: K
  /** The command prefix: operation ids `<command>.save`..., group `<command>`, scopes `<command>:read|write|submit`. */
  readonly command: C
  /** The draft, as saved and as approved. */
  readonly data: Schema.Schema<A, I>
  /** The owner's view every owner operation answers with. */
  readonly own: Schema.Schema<OA, OI>
  /** The kind's 400 for data the schema alone cannot judge (spec: `invalid_task` for tasks). */
  readonly invalid: ApiErrorClass<E> & Schema.Schema<E, EI>
  /**
   * Every failure of a malformed save, schema violations included, answers `invalid` (spec: tasks
   * answer `invalid_task`); otherwise `invalid_request`.
   */
  readonly invalidCoversInput: boolean
  /** Fields of the save input beside the common ones and `data`; `submit` saves and submits in one command. */
  readonly saveAlso: Extra
  /** The owner operations, in catalog order. */
  readonly operations: Ops
  /** The event type `close` records; `null` for a kind that does not close. */
  readonly closedEvent: Closed
  /** The uploaded files a draft refers to, checked to be ready files of the profile. */
  readonly references?: (data: A) => { readonly assets: ReadonlyArray<string>; readonly files: ReadonlyArray<string> }
  /** Why a draft cannot be submitted yet, if it cannot. */
  readonly unsubmittable?: (data: A) => string | undefined
}

const capitalized = (word: string) => word.charAt(0).toUpperCase() + word.slice(1)

/**
 * A kind with what derives from its row: its scopes, save input (`<Kind>Save`), the save's policy
 * and the group of its owner commands in the catalog.
 */
const kindOf = <
  const K extends PublicationKind,
  const C extends string,
  A,
  I,
  OA,
  OI,
  E extends InvalidTask | InvalidPublication,
  EI,
  const Extra extends Schema.Struct.Fields,
  const Ops extends ReadonlyArray<OwnerOperation>,
  const Closed extends EventType | null
>(row: KindRow<K, C, A, I, OA, OI, E, EI, Extra, Ops, Closed>) => {
  const { command } = row
  const scopes = { read: `${command}:read`, write: `${command}:write`, submit: `${command}:submit` } as const
  const save = saveInput(row.data, row.saveAlso, `${capitalized(row.kind)}Save`)
  // A save with `submit: true` is submitted: the caller needs what `<command>.submit` needs.
  const widenedBy: Readonly<Record<string, string>> = "submit" in row.saveAlso ? { submit: `${command}.submit` } : {}
  const invalidInput = row.invalidCoversInput ? { "*": row.invalid } : {}
  const group = ownerCommandsGroup(
    { kind: row.kind, command, scopes, save, own: row.own, invalid: row.invalid, invalidInput, widenedBy },
    row.operations
  )
  return { ...row, scopes, save, widenedBy, group }
}

type MediaRefs = Parameters<typeof referencedFiles>[0]

/** A media kind: the owner view `Own<Kind>`, `invalid_publication`, and its files checked on save. */
const mediaKind = <const K extends PublicationKind, const C extends string, A extends MediaRefs, I>(
  kind: K,
  command: C,
  data: Schema.Schema<A, I>
) =>
  kindOf({
    kind,
    command,
    data,
    own: ownPublication(data, `Own${capitalized(kind)}`),
    invalid: InvalidPublication,
    invalidCoversInput: false,
    saveAlso: {},
    operations: ownerOperations,
    closedEvent: null,
    references: referencedFiles
  })

/**
 * The seven publication kinds, one row each, in the catalog's order of their groups (the spec's
 * list of commands). Their operations, implementations, scopes, save inputs, `publications.create`
 * and the event catalog's reads of a publication all derive from this table: a new kind is one row
 * here (with its literal in `PublicationKind`) and its data schema.
 */
export const kinds = {
  task: kindOf({
    kind: "task",
    command: "tasks",
    data: TaskData,
    own: OwnTask,
    invalid: InvalidTask,
    invalidCoversInput: true,
    saveAlso: {
      submit: optionalField(Schema.Boolean, "When true, the saved draft is also submitted for publication (what tasks.submit does).")
    },
    // Close (ours): the task stays readable, marked closed, and takes no new responses.
    operations: [...ownerOperations, "close"],
    closedEvent: "task.closed",
    unsubmittable: (data) =>
      codePoints(data.description.trim()) >= minSubmitDescription
        ? undefined
        : `a task needs a description of at least ${minSubmitDescription} characters to be submitted`
  }),
  portfolio: mediaKind("portfolio", "portfolio", PortfolioData),
  service: mediaKind("service", "services", ServiceData),
  article: mediaKind("article", "articles", ArticleData),
  vacancy: mediaKind("vacancy", "jobs", VacancyData),
  resume: mediaKind("resume", "resumes", ResumeData),
  training: mediaKind("training", "learning", TrainingData)
} as const satisfies { readonly [K in PublicationKind]: { readonly kind: K } }

export type Kinds = typeof kinds
/** Any row of the table. */
export type AnyKind = Kinds[PublicationKind]

/** Every kind in the catalog's order. */
export const kindList: ReadonlyArray<AnyKind> = Object.values(kinds)

/** The command prefix of a kind (`task` → `tasks`). */
export type PublicationCommand = AnyKind["command"]
