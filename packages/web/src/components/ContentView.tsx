import type { ReactNode } from "react"
import type { Texts } from "../i18n.js"
import type { BlockView, Picture } from "../model.js"

/** Where a picture's bytes are read: a task's own data URL, else the uploaded file. */
export const pictureSrc = (picture: Picture) => picture.src ?? `/api/v1/files/${picture.id}/content`

const Figure = ({ picture, wide }: { readonly picture: Picture; readonly wide?: boolean }) => (
  <figure className={wide === true ? "content__figure content__figure--wide" : "content__figure"}>
    <img src={pictureSrc(picture)} alt={picture.alt} loading="lazy" width={wide === true ? 960 : 640} height={wide === true ? 600 : 400} />
    {picture.caption === "" ? null : <figcaption>{picture.caption}</figcaption>}
  </figure>
)

const linkPattern = /\[([^\]\n]+)\]\((https:\/\/[^\s)]+)\)|\*\*([^*\n]+)\*\*/g

/** One line's inline markup: `**bold**` and `[a link](https://…)` (only https addresses become links). */
const inline = (text: string): ReactNode => {
  const parts: Array<ReactNode> = []
  let at = 0
  for (const match of text.matchAll(linkPattern)) {
    if (match.index > at) parts.push(text.slice(at, match.index))
    parts.push(match[3] !== undefined
      ? <strong key={match.index}>{match[3]}</strong>
      : <a key={match.index} href={match[2]} rel="nofollow noopener">{match[1]}</a>)
    at = match.index + match[0].length
  }
  if (at < text.length) parts.push(text.slice(at))
  return parts.length === 1 ? parts[0] : parts
}

/**
 * A rich-text block (spec: "lightweight inline markup, headings, lists, links"): a blank line
 * starts a paragraph; `# ` or `## ` a heading; lines of `- ` or `* ` a list.
 */
export const RichText = ({ text }: { readonly text: string }) => (
  <>
    {text.split(/\n\s*\n/).filter((part) => part.trim() !== "").map((part, i) => {
      const lines = part.split("\n").map((line) => line.trimEnd())
      const heading = /^#{1,3} (.*)$/.exec(lines[0]!.trim())
      if (heading !== null && lines.length === 1) return <h3 key={i}>{inline(heading[1]!)}</h3>
      if (lines.every((line) => /^\s*[-*] /.test(line))) {
        return <ul key={i}>{lines.map((line, j) => <li key={j}>{inline(line.replace(/^\s*[-*] /, ""))}</li>)}</ul>
      }
      return <p key={i}>{lines.flatMap((line, j) => j === 0 ? [inline(line)] : [<br key={`br${j}`} />, inline(line)])}</p>
    })}
  </>
)

/** A publication's content blocks in order: text, pictures with their alt text and caption, galleries, lists, code. */
export const ContentView = ({ blocks, texts }: { readonly blocks: ReadonlyArray<BlockView>; readonly texts: Texts }) => (
  <div className="content">
    {blocks.map((block) => (
      <section key={block.id} className={`content__block content__block--${block.type}`}>
        {block.title === undefined || block.title === "" ? null : <h2>{block.title}</h2>}
        {block.type === "richtext" ? <RichText text={block.text ?? ""} /> : null}
        {block.type === "heading" && block.text !== undefined ? <h2>{block.text}</h2> : null}
        {block.type === "quote" ? <blockquote><RichText text={block.text ?? ""} /></blockquote> : null}
        {block.type === "image" && block.media[0] !== undefined ? <Figure picture={block.media[0]} wide /> : null}
        {block.type === "gallery"
          ? <div className="gallery">{block.media.map((picture) => <Figure key={picture.id} picture={picture} />)}</div>
          : null}
        {block.type === "list" ? <ul>{(block.items ?? []).map((item, i) => <li key={i}>{item}</li>)}</ul> : null}
        {block.type === "code" ? (
          <figure className="code">
            <figcaption>{block.language === undefined || block.language === "" ? texts.t("content.codeCaption") : texts.t("content.codeIn", { language: block.language })}</figcaption>
            {/* Focusable: a long line scrolls sideways, and the keyboard must reach it. */}
            <pre tabIndex={0}><code>{block.text ?? ""}</code></pre>
          </figure>
        ) : null}
      </section>
    ))}
  </div>
)
