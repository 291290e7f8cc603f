import { deflateSync } from "node:zlib"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { screenshot } from "../../../../testing/browser.js"
import { openJourney, poll } from "./webJourney.js"

// The content editor's journey through the web application's pages (packages/web): an author
// publishes an article whose pictures are uploaded through files.prepare/complete (each with a
// caption and an alt text) and placed in image, gallery, code, list and text blocks; a save at a
// stale revision is explained; a moderator approves; a visitor who is not signed in sees the
// blocks with the pictures' alt texts. A resume, a training and a portfolio item are made and
// sent to moderation; an employer invites the resume's owner, who accepts. Every step is a page's.

// Two moderators: one email signs in once a minute at most (the resend cooldown).
const moderatorEmails = ["moderator.web-content@example.com", "moderator2.web-content@example.com"]
const shots = "web-content"

const world = openJourney({ label: "web_content", moderators: moderatorEmails, shots, subnet: 117 })

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
const crc32 = (bytes: Buffer) => {
  let c = 0xffffffff
  for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
const chunk = (type: string, data: Buffer) => {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, "ascii"), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}
/** A real PNG picture of 160×100 pixels: a gradient of the given colour, so each one differs. */
const png = (red: number, green: number, blue: number) => {
  const width = 160
  const height = 100
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8)
  const rows = Buffer.alloc((width * 3 + 1) * height)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = y * (width * 3 + 1) + 1 + x * 3
      rows.set([Math.round(red * x / width), Math.round(green * y / height), blue], at)
    }
  }
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", header), chunk("IDAT", deflateSync(rows)), chunk("IEND", Buffer.alloc(0))])
}

/** A block of the content editor, by its legend ("Block 2: Picture"). */
const block = (tab: Page, n: number) => tab.getByRole("group", { name: new RegExp(`^Block ${n}: `) })

/** Waits until a save led to `path`; a refusal fails with the page's status line. */
const savedTo = (tab: Page, url: string) =>
  poll(async () => tab.url() === url ? "saved" : await tab.locator("#status").textContent({ timeout: 1000 }).catch(() => "")).toBe("saved")

const addBlock = async (tab: Page, kind: string) => {
  await tab.getByLabel("Kind of the new block").selectOption({ label: kind })
  await tab.getByRole("button", { name: "Add a block" }).click()
}

describe("the content editor's journey through the pages", { timeout: 900_000 }, () => {
  it("an article with uploaded pictures in image, gallery, code and list blocks → a stale save explained → moderated → a visitor sees it with alt texts", async () => {
    const { origin, person, checkPage, browser } = world
    // One after the other: the sign-in page loads the client on demand, slow on a busy machine.
    const author = await person(`author.web-content.${Date.now()}@example.com`)
    const moderator = await person(moderatorEmails[0]!)
    const a = author.tab
    const title = `Baking sourdough at home ${Date.now().toString(36)}`

    await a.goto(`${origin}/publications?lang=en`)
    await a.getByRole("link", { name: "New article" }).click()
    await a.waitForURL(`${origin}/articles/new?lang=en`)
    await checkPage(a, "article-editor-new", "/articles/new")
    await a.getByLabel("Title", { exact: true }).fill(title)
    await a.getByLabel("Description", { exact: true }).fill("How a starter, flour and patience make a loaf.")
    await a.getByLabel("Lead", { exact: true }).fill("Three days from starter to crust.")
    await a.getByLabel("Tags", { exact: true }).fill("bread, sourdough")

    // Three pictures, uploaded with progress; each captioned and described.
    await a.getByLabel("Upload pictures").setInputFiles([
      { name: "starter.png", mimeType: "image/png", buffer: png(255, 160, 40) },
      { name: "dough.png", mimeType: "image/png", buffer: png(90, 200, 120) },
      { name: "loaf.png", mimeType: "image/png", buffer: png(120, 80, 220) }
    ])
    // Ready once files.complete answered: the row shows the uploaded picture, read from the service.
    await poll(() => a.locator(".content-editor .attachments img").count()).toBe(3)
    expect(await a.locator(".content-editor .attachments progress").evaluateAll((bars) => bars.map((bar) => (bar as HTMLProgressElement).value))).toEqual([1, 1, 1])
    const names = ["starter", "dough", "loaf"]
    for (const [i, name] of names.entries()) {
      await a.getByLabel(`Caption of picture ${i + 1}`).fill(`The ${name}`)
      await a.getByLabel(`Description of picture ${i + 1} for those who cannot see it`).fill(`A photo of the ${name} on the table`)
    }

    // A block of each kind the specification names.
    await addBlock(a, "Text")
    await block(a, 1).getByLabel("Text of block 1").fill("## The starter\n\nFeed it **every morning** for a week.\n\n- flour\n- water")
    await addBlock(a, "Picture")
    await block(a, 2).getByLabel("Picture of block 2").selectOption({ label: "Picture 1: The starter" })
    await addBlock(a, "Gallery")
    await block(a, 3).getByLabel("Picture 2: The dough").check()
    await block(a, 3).getByLabel("Picture 3: The loaf").check()
    await addBlock(a, "List")
    await block(a, 4).getByLabel("Items of block 4, one a line").fill("500 g flour\n350 g water\n10 g salt")
    await addBlock(a, "Code")
    await block(a, 5).getByLabel("Programming language of block 5").fill("python")
    await block(a, 5).getByLabel("Code of block 5").fill("hydration = water / flour  # 0.7")
    // Blocks move: the list goes above the gallery.
    await block(a, 4).getByRole("button", { name: "Move block 4 up" }).click()
    expect(await block(a, 3).locator("legend").textContent()).toBe("Block 3: List")

    // The preview shows the blocks as the public page will, pictures with their alt texts.
    await a.getByRole("button", { name: "Show the preview" }).click()
    const preview = a.getByRole("region", { name: "Preview of the content" })
    await poll(() => preview.locator("img").evaluateAll((images) => images.map((img) => (img as HTMLImageElement).alt)))
      .toEqual(["A photo of the starter on the table", "A photo of the dough on the table", "A photo of the loaf on the table"])
    expect(await preview.locator("h3").textContent()).toBe("The starter")
    expect(await preview.locator("strong").textContent()).toBe("every morning")
    await poll(() => preview.locator("img").evaluateAll((images) => images.every((img) => (img as HTMLImageElement).naturalWidth === 160))).toBe(true)

    await a.getByRole("button", { name: "Save draft" }).click()
    await savedTo(a, `${origin}/publications?lang=en`)
    const row = a.locator("li.row", { hasText: title })
    expect(await row.locator(".tag").textContent()).toBe("Draft")
    expect(await row.textContent()).toContain("Article")
    await row.getByRole("link", { name: `Edit “${title}”` }).click()
    await a.waitForURL(/\/articles\/[0-9a-f-]{36}\/edit\?lang=en$/)
    const editPath = new URL(a.url()).pathname
    // The whole draft came back: fields, pictures with their texts, blocks in their order.
    expect(await a.getByLabel("Lead", { exact: true }).inputValue()).toBe("Three days from starter to crust.")
    expect(await a.getByLabel("Description of picture 3 for those who cannot see it").inputValue()).toBe("A photo of the loaf on the table")
    expect(await a.locator(".blocks > fieldset > legend").allTextContents()).toEqual(["Block 1: Text", "Block 2: Picture", "Block 3: List", "Block 4: Gallery", "Block 5: Code"])
    await checkPage(a, "article-editor-edit", editPath)

    // A stale revision: the draft is saved in another tab, then this one saves what it read.
    const other = await author.context.newPage()
    await other.goto(`${origin}${editPath}?lang=en`)
    await other.getByLabel("Title", { exact: true }).fill(`${title} (v2)`)
    await a.reload()
    await a.getByLabel("Title", { exact: true }).waitFor()
    await other.getByRole("button", { name: "Save draft" }).click()
    await savedTo(other, `${origin}/publications?lang=en`)
    await other.close()
    await a.getByLabel("Tags", { exact: true }).fill("bread")
    await a.getByRole("button", { name: "Save draft" }).click()
    await a.getByText("This draft was saved elsewhere after you opened it").waitFor()
    expect(a.url()).toBe(`${origin}${editPath}?lang=en`)
    await screenshot(a, `${shots}/article-stale-en-1280`)
    await a.getByRole("button", { name: "Reload the current draft" }).click()
    await poll(() => a.getByLabel("Title", { exact: true }).inputValue()).toBe(`${title} (v2)`)
    // Now at the current revision: sent to moderation.
    await a.getByRole("button", { name: "Send to moderation" }).click()
    await savedTo(a, `${origin}/publications?lang=en`)
    expect(await a.locator("li.row", { hasText: title }).locator(".tag").textContent()).toBe("Awaiting moderation")

    const m = moderator.tab
    await m.goto(`${origin}/moderation?lang=en`)
    await m.locator("li.row", { hasText: title }).getByRole("button", { name: "Approve" }).click()
    await poll(() => m.locator("li.row", { hasText: title }).count()).toBe(0)

    // A visitor, not signed in, finds it in the catalog and sees its blocks.
    const visitorContext = await browser.newContext({ locale: "en-GB", extraHTTPHeaders: { "x-forwarded-for": "198.51.117.200" } })
    const v = await visitorContext.newPage()
    const visitorErrors: Array<string> = []
    v.on("pageerror", (error) => visitorErrors.push(error.message))
    await v.goto(`${origin}/catalog?lang=en&kind=article`)
    await v.getByRole("link", { name: `${title} (v2)` }).click()
    await v.waitForURL(/\/p\/[0-9a-f-]{36}\?lang=en$/)
    const publicPath = new URL(v.url()).pathname
    const main = v.locator("main")
    expect(await main.locator(".lead").textContent()).toBe("Three days from starter to crust.")
    expect(await main.locator(".content img").evaluateAll((images) => images.map((img) => (img as HTMLImageElement).alt)))
      .toEqual(["A photo of the starter on the table", "A photo of the dough on the table", "A photo of the loaf on the table"])
    expect(await main.locator(".content figcaption").allTextContents()).toEqual(["The starter", "The dough", "The loaf", "Code in python"])
    expect(await main.locator(".content .gallery img").count()).toBe(2)
    expect(await main.locator(".content pre code").textContent()).toBe("hydration = water / flour  # 0.7")
    expect(await main.locator(".content__block--list li").allTextContents()).toEqual(["500 g flour", "350 g water", "10 g salt"])
    expect(await main.locator(".content__block--richtext li").allTextContents()).toEqual(["flour", "water"])
    // The pictures load for anyone once the article is public (no picture twice: none outside the blocks).
    await poll(() => main.locator("img").evaluateAll((images) => images.map((img) => (img as HTMLImageElement).naturalWidth))).toEqual([160, 160, 160])
    await checkPage(v, "article-public", publicPath)

    expect([...author.errors, ...moderator.errors, ...visitorErrors]).toEqual([])
    await Promise.all([author.context.close(), moderator.context.close(), visitorContext.close()])
  })

  it("a resume, a training and a portfolio item are made and sent to moderation; an employer invites by the resume, its owner accepts", async () => {
    const { origin, person, checkPage } = world
    const stamp = Date.now().toString(36)
    const candidate = await person(`candidate.web-content.${Date.now()}@example.com`)
    const employer = await person(`employer.web-content.${Date.now()}@example.com`)
    const moderator = await person(moderatorEmails[1]!)
    const c = candidate.tab

    // A resume: the position, the salary wished, where and how, skills.
    const resumeTitle = `Pastry chef ${stamp}`
    await c.goto(`${origin}/publications?lang=en`)
    await c.getByRole("link", { name: "New resume" }).click()
    await c.waitForURL(`${origin}/resumes/new?lang=en`)
    await checkPage(c, "resume-editor", "/resumes/new")
    await c.getByLabel("Title", { exact: true }).fill(resumeTitle)
    await c.getByLabel("About you").fill("Ten years of laminated doughs and wedding cakes.")
    await c.getByLabel("Position", { exact: true }).fill("Pastry chef")
    await c.getByLabel("Desired salary").fill("90 000")
    await c.getByLabel("Years of experience").fill("10")
    await c.getByLabel("Skills").fill("croissants, chocolate")
    await c.getByRole("group", { name: "Workplace" }).getByLabel("on site").check()
    await c.getByRole("group", { name: "Employment" }).getByLabel("full time").check()
    // Out of bounds: refused on the page, nothing saved.
    await c.getByLabel("Years of experience").fill("99")
    await c.getByRole("button", { name: "Send to moderation" }).click()
    await c.getByText("Check the salary (a whole amount) and the years of experience (0 to 70).").waitFor()
    await c.getByLabel("Years of experience").fill("10")
    await c.getByRole("button", { name: "Send to moderation" }).click()
    await savedTo(c, `${origin}/publications?lang=en`)

    // A training with its format, level, duration and price.
    const trainingTitle = `Croissant class ${stamp}`
    await c.getByRole("link", { name: "New training" }).click()
    await c.waitForURL(`${origin}/trainings/new?lang=en`)
    await checkPage(c, "training-editor", "/trainings/new")
    await c.getByLabel("Title", { exact: true }).fill(trainingTitle)
    await c.getByLabel("Format").selectOption("offline")
    await c.getByLabel("Level").selectOption("beginner")
    await c.getByLabel("Duration, hours").fill("6")
    await c.getByLabel("Amount").fill("4 500")
    await c.getByLabel("What learners will be able to do, one a line").fill("Laminate a dough\nShape croissants")
    await c.getByLabel("A certificate at the end").check()
    await c.getByRole("button", { name: "Send to moderation" }).click()
    await savedTo(c, `${origin}/publications?lang=en`)

    // A portfolio item with one picture in an image block.
    const portfolioTitle = `Wedding cake for Anna ${stamp}`
    await c.getByRole("link", { name: "New portfolio item" }).click()
    await c.waitForURL(`${origin}/portfolio/new?lang=en`)
    await checkPage(c, "portfolio-editor", "/portfolio/new")
    await c.getByLabel("Title", { exact: true }).fill(portfolioTitle)
    await c.getByLabel("Client").fill("Anna and Boris")
    await c.getByLabel("Year").fill("2025")
    await c.getByLabel("Project's address").fill("https://example.com/cake")
    await c.getByLabel("Upload pictures").setInputFiles([{ name: "cake.png", mimeType: "image/png", buffer: png(240, 220, 200) }])
    await poll(() => c.locator(".content-editor .attachments img").count()).toBe(1)
    await c.getByLabel("Description of picture 1 for those who cannot see it").fill("A three-tier white cake with roses")
    await addBlock(c, "Picture")
    // A picture block without its picture is not saved; the page says why.
    await c.getByRole("button", { name: "Save draft" }).click()
    await c.getByText("A picture or gallery block needs its pictures").waitFor()
    await block(c, 1).getByLabel("Picture of block 1").selectOption({ index: 1 })
    await c.getByRole("button", { name: "Send to moderation" }).click()
    await savedTo(c, `${origin}/publications?lang=en`)

    for (const [name, kind] of [[resumeTitle, "Resume"], [trainingTitle, "Training"], [portfolioTitle, "Portfolio"]] as const) {
      const row = c.locator("li.row", { hasText: name })
      expect(await row.locator(".tag").textContent(), name).toBe("Awaiting moderation")
      expect(await row.textContent(), name).toContain(kind)
    }
    await checkPage(c, "my-publications-all-kinds", "/publications")

    // The moderator approves the resume; an employer invites its owner from its page.
    const m = moderator.tab
    await m.goto(`${origin}/moderation?lang=en`)
    await m.locator("li.row", { hasText: resumeTitle }).getByRole("button", { name: "Approve" }).click()
    await poll(() => m.locator("li.row", { hasText: resumeTitle }).count()).toBe(0)
    const e = employer.tab
    await e.goto(`${origin}/catalog?lang=en&kind=resume`)
    await e.getByRole("link", { name: resumeTitle }).click()
    await e.waitForURL(/\/p\/[0-9a-f-]{36}\?lang=en$/)
    const resumePath = new URL(e.url()).pathname
    expect(await e.locator("main").innerText()).toMatch(/90[\s\u00a0,]000/)
    await checkPage(e, "resume-invite", resumePath)
    await e.getByLabel("Your letter: the position and what you offer").fill("Head pastry chef at our bakery, five days a week.")
    await e.getByRole("button", { name: "Send the invitation" }).click()
    await e.getByText("Your invitation has been sent.").waitFor()

    // The candidate sees the invitation among job contacts and accepts it.
    await c.goto(`${origin}/responses?lang=en`)
    const invitation = c.locator("li.row", { hasText: "Head pastry chef" })
    await invitation.getByRole("button", { name: "Accept" }).click()
    await poll(() => c.locator("li.row", { hasText: "Head pastry chef" }).locator(".tag").first().textContent()).toBe("Accepted")

    expect([...candidate.errors, ...employer.errors, ...moderator.errors]).toEqual([])
    await Promise.all([candidate.context.close(), employer.context.close(), moderator.context.close()])
  })
})
