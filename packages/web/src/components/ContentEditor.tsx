import { useRef, useState } from "react"
import type { MessageKey, Texts } from "../i18n.js"
import type { BlockView } from "../model.js"
import { useHydrated } from "../hydrated.js"
import { ContentView } from "./ContentView.js"
import { objectAt } from "./EditorForm.js"
import { uploadFile } from "./useAction.js"

type Json = Readonly<Record<string, unknown>>

/** A picture of the content (content.assets): uploaded through files.prepare/complete, then captioned and described. */
export interface AssetDraft {
  /** The row's key: the file's uuid once prepared, a local one while it uploads. */
  readonly key: string
  /** The ready file's uuid; undefined until files.complete answered. */
  readonly id?: string
  readonly name: string
  readonly caption: string
  readonly alt: string
  readonly progress: number
}

/** The block types the editor makes (the spec's: rich text, image, gallery, list, code). */
export const blockTypes = ["richtext", "image", "gallery", "list", "code"] as const

/** A block as edited: the block as read (its other fields kept) with what the form changes. */
export interface BlockDraft {
  readonly id: string
  readonly type: string
  readonly block: Json
  readonly title: string
  readonly text: string
  readonly items: string
  readonly mediaIds: ReadonlyArray<string>
  readonly language: string
}

export interface ContentDraft {
  readonly assets: ReadonlyArray<AssetDraft>
  readonly blocks: ReadonlyArray<BlockDraft>
}

const strings = (value: unknown): ReadonlyArray<string> => Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []
const str = (value: unknown) => typeof value === "string" ? value : ""

/** The editor's state from a draft's content document (nothing when it has none). */
export const contentDraftOf = (draft: Json | undefined): ContentDraft => {
  const content = objectAt(draft, "content")
  const assets = (Array.isArray(content["assets"]) ? content["assets"] as ReadonlyArray<Json> : [])
    .map((asset): AssetDraft => ({ key: str(asset["id"]), id: str(asset["id"]), name: str(asset["caption"]), caption: str(asset["caption"]), alt: str(asset["alt"]), progress: 1 }))
  const blocks = (Array.isArray(content["blocks"]) ? content["blocks"] as ReadonlyArray<Json> : []).map((block): BlockDraft => ({
    id: str(block["id"]), type: str(block["type"]), block,
    title: str(block["title"]), text: str(block["text"]), items: strings(block["items"]).join("\n"),
    mediaIds: strings(block["mediaIds"]), language: str(block["language"])
  }))
  return { assets, blocks }
}

/**
 * The content document to save (the previous one's other fields kept: preview, article), or the
 * message of what keeps it from being saved. `undefined` content: the draft had none and still has none.
 */
export const contentOf = (state: ContentDraft, previous: Json): { readonly content?: Record<string, unknown>; readonly problem?: MessageKey } => {
  if (state.assets.some((asset) => asset.id === undefined)) return { problem: "content.waitUploads" }
  const ready = new Set(state.assets.map((asset) => asset.id!))
  const blocks = state.blocks.map((draft) => {
    const items = draft.items.split("\n").map((item) => item.trim()).filter((item) => item !== "")
    const mediaIds = draft.mediaIds.filter((id) => ready.has(id))
    const { title: _t, text: _x, items: _i, mediaIds: _m, language: _l, ...rest } = draft.block
    return {
      ...rest,
      id: draft.id,
      type: draft.type,
      ...(draft.title.trim() === "" ? {} : { title: draft.title.trim() }),
      ...(draft.text === "" ? {} : { text: draft.text }),
      ...(draft.type === "list" ? { items } : {}),
      ...(draft.type === "image" || draft.type === "gallery" ? { mediaIds } : {}),
      ...(draft.type === "code" && draft.language.trim() !== "" ? { language: draft.language.trim() } : {})
    }
  })
  const incomplete = blocks.some((block) =>
    (block.type === "image" && block.mediaIds?.length !== 1) || (block.type === "gallery" && (block.mediaIds?.length ?? 0) === 0) ||
    (block.type === "list" && (block.items?.length ?? 0) === 0))
  if (incomplete) return { problem: "content.incomplete" }
  if (Object.keys(previous).length === 0 && state.assets.length === 0 && blocks.length === 0) return {}
  // What refers to an asset keeps only the ones still listed (the service refuses a reference to an unlisted one).
  const preview = objectAt(previous, "preview")
  const article = objectAt(previous, "article")
  const coverId = str(article["coverId"])
  return {
    content: {
      ...previous,
      version: 1,
      ...(previous["preview"] === undefined ? {} : { preview: { ...preview, ...(preview["assetIds"] === undefined ? {} : { assetIds: strings(preview["assetIds"]).filter((id) => ready.has(id)) }) } }),
      ...(previous["article"] === undefined ? {} : { article: Object.fromEntries(Object.entries(article).filter(([key]) => key !== "coverId" || ready.has(coverId))) }),
      assets: state.assets.map((asset) => ({
        id: asset.id!, kind: "image",
        ...(asset.caption.trim() === "" ? {} : { caption: asset.caption.trim() }),
        ...(asset.alt.trim() === "" ? {} : { alt: asset.alt.trim() })
      })),
      blocks
    }
  }
}

/** The blocks as the public page shows them, their pictures resolved (the editor's preview). */
export const blockViewsOf = (state: ContentDraft): ReadonlyArray<BlockView> => {
  const assets = new Map(state.assets.filter((asset) => asset.id !== undefined).map((asset) => [asset.id!, asset]))
  return state.blocks.map((draft) => ({
    id: draft.id, type: draft.type, title: draft.title, text: draft.text, language: draft.language,
    items: draft.items.split("\n").filter((item) => item.trim() !== ""),
    media: draft.mediaIds.flatMap((id) => {
      const asset = assets.get(id)
      return asset === undefined ? [] : [{ id, alt: asset.alt, caption: asset.caption }]
    })
  }))
}

const maxAssets = 50
const maxBlocks = 200
const maxAssetBytes = 5 * 1024 * 1024
const imageTypes = ["image/png", "image/jpeg", "image/webp", "image/gif", "image/avif"]

/**
 * The content editor of the specification's document: pictures (uploaded through files.prepare,
 * the PUT of their bytes and files.complete, with progress; each with a caption and an alt text)
 * and blocks (rich text, image, gallery, list, code) in order, with a preview as the public page
 * shows them. Controlled: the editor page keeps the state and saves it with `contentOf`.
 */
export const ContentEditor = ({ value, onChange, texts, onProblem }: {
  readonly value: ContentDraft
  readonly onChange: (change: (now: ContentDraft) => ContentDraft) => void
  readonly texts: Texts
  readonly onProblem: (message: MessageKey) => void
}) => {
  const { t } = texts
  const hydrated = useHydrated()
  const picker = useRef<HTMLInputElement>(null)
  const [adding, setAdding] = useState<string>("richtext")
  const [previewing, setPreviewing] = useState(false)
  const setAsset = (key: string, change: Partial<AssetDraft>) =>
    onChange((now) => ({ ...now, assets: now.assets.map((asset) => asset.key === key ? { ...asset, ...change } : asset) }))
  const setBlock = (id: string, change: Partial<BlockDraft>) =>
    onChange((now) => ({ ...now, blocks: now.blocks.map((block) => block.id === id ? { ...block, ...change } : block) }))

  const upload = async () => {
    const chosen = [...(picker.current?.files ?? [])]
    if (picker.current !== null) picker.current.value = ""
    const { api, messageOf } = await import("../browserApi.js")
    let count = value.assets.length
    await Promise.all(chosen.map(async (file) => {
      if (count >= maxAssets) return onProblem("content.tooManyPictures")
      if (file.size === 0 || file.size > maxAssetBytes || !imageTypes.includes(file.type)) return onProblem("content.badFile")
      count++
      const key = crypto.randomUUID()
      onChange((now) => ({ ...now, assets: [...now.assets, { key, name: file.name, caption: "", alt: "", progress: 0 }] }))
      try {
        const id = await uploadFile(api, file, "publication_asset", (progress) => setAsset(key, { progress }))
        setAsset(key, { id, progress: 1 })
      } catch (error) {
        onChange((now) => ({ ...now, assets: now.assets.filter((asset) => asset.key !== key) }))
        onProblem(messageOf(error) === "error.failed" ? "content.uploadFailed" : messageOf(error))
      }
    }))
  }

  const removeAsset = (asset: AssetDraft) =>
    onChange((now) => ({
      assets: now.assets.filter((a) => a.key !== asset.key),
      blocks: now.blocks.map((block) => ({ ...block, mediaIds: block.mediaIds.filter((id) => id !== asset.id) }))
    }))
  const move = (index: number, by: -1 | 1) =>
    onChange((now) => {
      const blocks = [...now.blocks]
      const [moved] = blocks.splice(index, 1)
      blocks.splice(index + by, 0, moved!)
      return { ...now, blocks }
    })
  const addBlock = () => {
    if (value.blocks.length >= maxBlocks) return onProblem("content.tooManyBlocks")
    const id = `b-${crypto.randomUUID().slice(0, 8)}`
    onChange((now) => ({ ...now, blocks: [...now.blocks, { id, type: adding, block: {}, title: "", text: "", items: "", mediaIds: [], language: "" }] }))
  }
  const ready = value.assets.filter((asset) => asset.id !== undefined)
  const pictureName = (id: string) => {
    const at = value.assets.findIndex((asset) => asset.id === id)
    const asset = value.assets[at]
    return t("content.pictureOption", { n: at + 1, name: asset === undefined ? id : asset.caption || asset.alt || asset.name })
  }
  const typeLabel = (type: string) => (blockTypes as ReadonlyArray<string>).includes(type) || type === "quote" || type === "heading" ? t(`content.type.${type}` as "content.type.richtext") : type

  return (
    <section className="content-editor" aria-labelledby="content-heading">
      <h2 id="content-heading">{t("content.title")}</h2>
      <p className="hint">{t("content.hint")}</p>
      <fieldset className="pictures">
        <legend>{t("content.pictures")}</legend>
        <label htmlFor="content-pictures">{t("content.addPictures")}</label>
        <input id="content-pictures" ref={picker} type="file" accept={imageTypes.join(",")} multiple disabled={!hydrated} onChange={() => void upload()} aria-describedby="content-pictures-hint" />
        <p id="content-pictures-hint" className="hint">{t("content.picturesHint")}</p>
        <ul className="attachments">
          {value.assets.map((asset, index) => (
            <li key={asset.key} data-asset={asset.id ?? ""}>
              {asset.id === undefined ? <span /> : <img src={`/api/v1/files/${asset.id}/content`} alt="" width={96} height={64} />}
              <div className="field">
                <progress max={1} value={asset.progress} aria-label={t("content.uploading", { name: asset.name })} />
                <label htmlFor={`asset-caption-${asset.key}`}>{t("content.caption", { n: index + 1 })}</label>
                <input id={`asset-caption-${asset.key}`} value={asset.caption} maxLength={500} onChange={(event) => setAsset(asset.key, { caption: event.target.value })} />
                <label htmlFor={`asset-alt-${asset.key}`}>{t("content.alt", { n: index + 1 })}</label>
                <input id={`asset-alt-${asset.key}`} value={asset.alt} maxLength={500} onChange={(event) => setAsset(asset.key, { alt: event.target.value })} />
              </div>
              <button type="button" className="button button--secondary button--small" onClick={() => removeAsset(asset)}>
                {t("content.removePicture", { n: index + 1 })}
              </button>
            </li>
          ))}
        </ul>
      </fieldset>
      <div className="blocks">
        {value.blocks.length === 0 ? <p className="muted">{t("content.noBlocks")}</p> : null}
        {value.blocks.map((block, index) => {
          const n = index + 1
          const field = (name: string) => `block-${block.id}-${name}`
          return (
            <fieldset key={block.id} className="block">
              <legend>{t("content.block", { n, type: typeLabel(block.type) })}</legend>
              <label htmlFor={field("title")}>{t("content.blockTitle", { n })}</label>
              <input id={field("title")} value={block.title} maxLength={240} onChange={(event) => setBlock(block.id, { title: event.target.value })} />
              {block.type === "richtext" || block.type === "quote" || block.type === "heading" ? (
                <>
                  <label htmlFor={field("text")}>{t("content.text", { n })}</label>
                  <textarea id={field("text")} rows={6} maxLength={20000} value={block.text} aria-describedby="content-markup" onChange={(event) => setBlock(block.id, { text: event.target.value })} />
                </>
              ) : null}
              {block.type === "image" ? (
                <>
                  <label htmlFor={field("picture")}>{t("content.picture", { n })}</label>
                  <select id={field("picture")} value={block.mediaIds[0] ?? ""} onChange={(event) => setBlock(block.id, { mediaIds: event.target.value === "" ? [] : [event.target.value] })}>
                    <option value="">{t("content.choosePicture")}</option>
                    {ready.map((asset) => <option key={asset.id} value={asset.id}>{pictureName(asset.id!)}</option>)}
                  </select>
                </>
              ) : null}
              {block.type === "gallery" ? (
                <fieldset>
                  <legend>{t("content.galleryPictures", { n })}</legend>
                  {ready.length === 0 ? <p className="muted">{t("content.uploadFirst")}</p> : null}
                  {ready.map((asset) => (
                    <label key={asset.id} className="check">
                      <input
                        type="checkbox"
                        checked={block.mediaIds.includes(asset.id!)}
                        onChange={(event) =>
                          setBlock(block.id, {
                            mediaIds: event.target.checked
                              ? [...block.mediaIds, asset.id!]
                              : block.mediaIds.filter((id) => id !== asset.id)
                          })}
                      />
                      {pictureName(asset.id!)}
                    </label>
                  ))}
                </fieldset>
              ) : null}
              {block.type === "list" ? (
                <>
                  <label htmlFor={field("items")}>{t("content.items", { n })}</label>
                  <textarea id={field("items")} rows={5} maxLength={100_000} value={block.items} onChange={(event) => setBlock(block.id, { items: event.target.value })} />
                </>
              ) : null}
              {block.type === "code" ? (
                <>
                  <label htmlFor={field("language")}>{t("content.language", { n })}</label>
                  <input id={field("language")} value={block.language} maxLength={40} onChange={(event) => setBlock(block.id, { language: event.target.value })} />
                  <label htmlFor={field("code")}>{t("content.code", { n })}</label>
                  <textarea id={field("code")} className="code-input" rows={8} maxLength={20000} spellCheck={false} value={block.text} onChange={(event) => setBlock(block.id, { text: event.target.value })} />
                </>
              ) : null}
              <div className="actions">
                {index === 0 ? null : <button type="button" className="button button--secondary button--small" onClick={() => move(index, -1)}>{t("content.moveUp", { n })}</button>}
                {index === value.blocks.length - 1 ? null : <button type="button" className="button button--secondary button--small" onClick={() => move(index, 1)}>{t("content.moveDown", { n })}</button>}
                <button type="button" className="button button--secondary button--small" onClick={() => onChange((now) => ({ ...now, blocks: now.blocks.filter((b) => b.id !== block.id) }))}>
                  {t("content.removeBlock", { n })}
                </button>
              </div>
            </fieldset>
          )
        })}
        <p id="content-markup" className="hint">{t("content.markup")}</p>
        <div className="actions">
          <label htmlFor="content-add-type">{t("content.addType")}</label>
          <select id="content-add-type" value={adding} onChange={(event) => setAdding(event.target.value)}>
            {blockTypes.map((type) => <option key={type} value={type}>{typeLabel(type)}</option>)}
          </select>
          <button type="button" className="button button--secondary" disabled={!hydrated} onClick={addBlock}>{t("content.add")}</button>
        </div>
      </div>
      <p>
        <button type="button" className="button button--secondary" disabled={!hydrated} aria-expanded={previewing} aria-controls="content-preview" onClick={() => setPreviewing(!previewing)}>
          {t(previewing ? "content.hidePreview" : "content.preview")}
        </button>
      </p>
      <section id="content-preview" className="content-preview" aria-label={t("content.previewTitle")} hidden={!previewing}>
        {previewing ? <ContentView blocks={blockViewsOf(value)} texts={texts} /> : null}
      </section>
    </section>
  )
}
