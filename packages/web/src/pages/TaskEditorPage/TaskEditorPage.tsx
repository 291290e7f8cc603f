import { type FormEvent, useRef, useState } from "react"
import { Choice, EditorActions, EditorHead, EditorStatus, TextArea, TextField } from "../../components/EditorForm.js"
import { href } from "../../components/Layout.js"
import { requestUuid, useAction } from "../../components/useAction.js"
import { useHydrated } from "../../hydrated.js"
import type { OwnTaskView } from "../../model.js"
import type { PageProps } from "../types.js"

export const title = ({ data, texts }: Pick<PageProps<"taskEditor">, "data" | "texts">) =>
  texts.t(data.task === undefined ? "task.newTitle" : "task.editTitle")

type Attached = OwnTaskView["files"][number] & { readonly progress: number }

const maxFiles = 5
const maxBytes = 1_048_576

/** Reads a picture as the data URL a task keeps (TaskData's files), reporting how far it got. */
const readAsDataUrl = (file: File, onProgress: (fraction: number) => void) =>
  new Promise<string>((resolve, reject) => {
    const reader = new FileReader()
    reader.onprogress = (event) => event.lengthComputable && onProgress(event.loaded / event.total)
    reader.onload = () => resolve(String(reader.result))
    reader.onerror = () => reject(reader.error)
    reader.readAsDataURL(file)
  })

/** The task editor: the whole draft (title, category, description, budget, deadline, up to five pictures with captions); saved as a draft or sent to moderation. */
export default function TaskEditorPage({ data, texts }: PageProps<"taskEditor">) {
  const { t, language } = texts
  const hydrated = useHydrated()
  const task = data.task
  const { busy, message, setMessage, run } = useAction()
  const [files, setFiles] = useState<ReadonlyArray<Attached>>((task?.files ?? []).map((file) => ({ ...file, progress: 1 })))
  const form = useRef<HTMLFormElement>(null)
  const picker = useRef<HTMLInputElement>(null)

  const attach = async () => {
    const chosen = [...(picker.current?.files ?? [])]
    if (picker.current !== null) picker.current.value = ""
    for (const file of chosen) {
      if (files.length >= maxFiles) return setMessage("task.tooManyFiles")
      if (file.size > maxBytes || !file.type.startsWith("image/")) {
        setMessage("task.badFile")
        continue
      }
      const id = crypto.randomUUID()
      setFiles((now) => [...now, { id, name: file.name.slice(0, 240), url: "", size: file.size, mimeType: file.type, progress: 0 }])
      const url = await readAsDataUrl(file, (progress) => setFiles((now) => now.map((f) => f.id === id ? { ...f, progress } : f)))
      setFiles((now) => now.map((f) => f.id === id ? { ...f, url, progress: 1 } : f))
    }
  }

  const save = (submit: boolean) => (event?: FormEvent) => {
    event?.preventDefault()
    const values = new FormData(form.current!)
    const field = (name: string) => String(values.get(name) ?? "")
    void run(
      (api) =>
        api["tasks.save"]({
          payload: {
            requestUuid: requestUuid(),
            ...(task === undefined ? {} : { publicationUuid: task.uuid, expectedRevision: task.revision }),
            submit,
            data: {
              title: field("title").trim(),
              category: field("category") as "Сайты",
              description: field("description"),
              budget: field("budget").trim(),
              deadline: field("deadline").trim(),
              files: files.filter((f) => f.url !== "").map(({ progress: _progress, ...file }) => ({ ...file, mimeType: file.mimeType as "image/png" }))
            }
          }
        }),
      () => location.assign(href("/publications", language))
    )
  }

  return (
    <div className="editor">
      <EditorHead heading={title({ data, texts })} status={task?.status} texts={texts} />
      <form ref={form} onSubmit={save(false)} className="stack" id="task-form">
        <TextField name="title" label={t("task.field.title")} value={task?.title} required minLength={3} maxLength={160} />
        <Choice name="category" label={t("task.field.category")} options={data.categories} value={task?.category} labelOf={(category) => t(`category.${category}` as "category.Сайты")} />
        <TextArea name="description" label={t("task.field.description")} value={task?.description} maxLength={20000} hint={t("task.descriptionHint")} />
        <TextField name="budget" label={t("task.field.budget")} value={task?.budget} maxLength={80} />
        <TextField name="deadline" label={t("task.field.deadline")} value={task?.deadline} maxLength={120} />
        <fieldset className="pictures">
          <legend>{t("task.pictures")}</legend>
          <label htmlFor="pictures">{t("task.addPictures")}</label>
          <input id="pictures" ref={picker} type="file" accept="image/png,image/jpeg,image/webp,image/gif,image/avif" multiple disabled={!hydrated || files.length >= maxFiles} onChange={() => void attach()} aria-describedby="pictures-hint" />
          <p id="pictures-hint" className="hint">{t("task.picturesHint")}</p>
          <ul className="attachments">
            {files.map((file, index) => (
              <li key={file.id}>
                {file.url === "" ? null : <img src={file.url} alt="" width={96} height={64} />}
                <div className="field">
                  <progress max={1} value={file.progress} aria-label={t("task.progress", { name: file.name })} />
                  <label htmlFor={`caption-${index}`}>{t("task.caption", { n: index + 1 })}</label>
                  <input
                    id={`caption-${index}`}
                    value={file.name}
                    maxLength={240}
                    onChange={(event) => {
                      const name = event.target.value
                      setFiles((now) => now.map((f) => f.id === file.id ? { ...f, name } : f))
                    }}
                  />
                </div>
                <button type="button" className="button button--secondary button--small" onClick={() => setFiles((now) => now.filter((f) => f.id !== file.id))}>
                  {t("task.removePicture", { n: index + 1 })}
                </button>
              </li>
            ))}
          </ul>
        </fieldset>
        <EditorActions texts={texts} disabled={!hydrated || busy} onSubmit={() => save(true)()} />
      </form>
      <EditorStatus message={message} texts={texts} />
    </div>
  )
}
