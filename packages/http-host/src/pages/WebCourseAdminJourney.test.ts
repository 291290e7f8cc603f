import { catalog } from "@birzha/domain"
import { advanceRuns, PostgresBlobStore, runLearningJobs } from "@birzha/domain/internal"
import { Effect, ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { signIn } from "../../../../testing/signIn.js"
import type { Caller } from "../testService.js"
import { openJourney, type Person, poll } from "./webJourney.js"
import { testPgLayer } from "../../../domain/test/pgLayer.js"

// Course administration through the web application's pages (packages/web): an owner, whose
// course is set up through the API, saves a module to the library, copies the course, exports it
// as a package and imports that package back as a new course, puts the saved module into the copy,
// makes a draft a bundle of the course, sorts two learners into a group with a capacity and its
// own staff, exports the grades as CSV, and hands the course to its instructor, who accepts on
// their library page; a learner downloads their own data. Jobs (exports, imports) are run by the
// worker's step in the test, as the worker would. Every page is checked in both languages at 1280
// and 390 px.

const moderatorEmail = "moderator.web-course-admin@example.com"
const shots = "course-admin"

const world = openJourney({ label: "web_course_admin", moderators: [moderatorEmail], shots, subnet: 145 })

type Body = Record<string, any>

/** One operation over HTTP at its declared route, as `who`: path parameters from the arguments, the rest as the query (GET) or the body. */
const act = async (who: Caller, id: string, args: Body = {}): Promise<Body> => {
  const entry = catalog.find((candidate) => candidate.id === id)
  if (entry === undefined) throw new Error(`no operation ${id} in the catalog`)
  const rest: Body = { ...args }
  const path = entry.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = String(rest[name])
    delete rest[name]
    return encodeURIComponent(value)
  })
  const answer = entry.method === "GET"
    ? await world.service.call<Body>("GET", `${path}?${new URLSearchParams(Object.entries(rest).map(([k, v]) => [k, String(v)])).toString()}`, who)
    : await world.service.call<Body>(entry.method, path, who, { requestUuid: randomUUID(), ...rest })
  expect(answer.status, `${id}: ${JSON.stringify(answer.body)}`).toBe(200)
  return answer.body
}

/** The session a person signed in with through the pages, for the API calls that set the scene. */
const sessionOf = async (person: Person): Promise<Caller> => {
  const cookie = (await person.context.cookies()).find((c) => c.name === "__Host-birzha_session")
  if (cookie === undefined) throw new Error("no session cookie after signing in")
  return { cookie: `${cookie.name}=${cookie.value}` }
}

const day = 86_400_000

describe("course administration through the pages", { timeout: 900_000 }, () => {
  it("library → copy → package export and import → bundle → groups → exports → ownership transfer accepted", async () => {
    const { origin, person, checkPage, service, db } = world
    const worker = ManagedRuntime.make(testPgLayer(service.database.url, 1))
    /** The worker's step for learning jobs (exports, imports), as `birzha worker` runs it. */
    const work = () => worker.runPromise(Effect.provide(runLearningJobs(), PostgresBlobStore))
    /** A job's page, after the worker has done the job: the page reads it again by itself and shows the result. */
    const finishJob = async (tab: Page) => {
      await tab.waitForURL(/\/learning\/jobs\//)
      await work()
      await poll(() => tab.locator(".job-status").textContent()).toMatch(/finished|готово/)
    }
    /** The bytes a page's download link leads to, fetched with the person's session. */
    const download = async (who: Person, tab: Page) => {
      const link = tab.getByRole("link", { name: "Download the file" })
      const url = new URL((await link.getAttribute("href"))!, origin).toString()
      const answer = await who.context.request.get(url)
      expect(answer.status()).toBe(200)
      return answer.text()
    }
    try {
      const people = { url: service.host.url, origin, db }
      const moderator = await signIn({ ...people, email: moderatorEmail })
      const stamp = Date.now()
      const owner = await person(`owner.web-course-admin.${stamp}@example.com`)
      const instructor = await person(`instructor.web-course-admin.${stamp}@example.com`)
      const learners = [await person(`learner1.web-course-admin.${stamp}@example.com`), await person(`learner2.web-course-admin.${stamp}@example.com`)]
      const [ownerApi, instructorApi, ...learnerApis] = await Promise.all([owner, instructor, ...learners].map(sessionOf))
      const title = `Сортировки ${stamp.toString(36)}`

      // The scene, through the API: an approved training made a course with a module of two steps, published, with an open run.
      const publication = await act(ownerApi!, "learning.save", {
        data: { title, description: "Сортировки и их сложность", training: { level: "beginner", format: "online", durationHours: 6 } }
      })
      const submitted = await act(ownerApi!, "learning.submit", { publicationUuid: publication.uuid, expectedRevision: publication.revision })
      const approved = await service.call("POST", "/api/v1/moderation/decisions", moderator, {
        requestUuid: randomUUID(), publicationUuid: publication.uuid, expectedRevision: submitted.revision, decision: "approve"
      })
      expect(approved.status, JSON.stringify(approved.body)).toBe(200)
      const draft = await act(ownerApi!, "learning.courses.from_publication", { publicationUuid: publication.uuid })
      const course = draft.uuid as string
      const edited = await act(ownerApi!, "learning.courses.update", {
        course,
        expectedRevision: draft.revision,
        visibility: "listed",
        nodes: [
          ...draft.nodes,
          { nodeKey: "intro", parentKey: "module-1", kind: "step", stepType: "text", title: "Зачем сортировать", body: "Упорядоченные данные легче искать." },
          {
            nodeKey: "quiz", parentKey: "module-1", kind: "step", stepType: "quiz", title: "Сложность сортировки",
            body: "Сколько сравнений делает сортировка пузырьком на 7 элементах в худшем случае?",
            grading: { maxPoints: 10, passThreshold: 10, attempts: 3, check: { kind: "exact", answers: ["21"] } }, dueOffsetDays: 7
          }
        ]
      })
      await act(ownerApi!, "learning.courses.publish", { course, expectedRevision: edited.revision, changelog: "Первый выпуск" })
      const created = await act(ownerApi!, "learning.runs.create", {
        course, versionNumber: 1, title: "Осенний поток", pacing: "cohort",
        startsAt: new Date(Date.now() - 60_000).toISOString(), endsAt: new Date(Date.now() + 60 * day).toISOString(),
        admission: "open", waitlist: false, enrollmentWindow: {}, pausePolicy: { maxDays: 0, maxCount: 0 },
        extensionPolicy: { autoApproveDays: 0, maxDays: 30, maxCount: 3, windowDays: 7 }
      })
      await act(ownerApi!, "learning.runs.update", { run: created.uuid, expectedRevision: created.revision, publish: true })
      expect(await worker.runPromise(advanceRuns(new Date()))).toBeGreaterThanOrEqual(1)
      // The instructor joins the staff; both learners enroll; an empty draft waits to become a bundle.
      const instructorMe = await act(instructorApi!, "getMyCapabilities")
      const assigned = await act(ownerApi!, "learning.staff.assign", { course, profileUuid: instructorMe.profile.uuid, role: "instructor", scope: {} })
      await act(instructorApi!, "learning.staff.accept", { assignment: assigned.uuid, expectedRevision: assigned.revision })
      for (const learner of learnerApis) await act(learner, "learning.enrollments.enroll", { run: created.uuid })
      const series = await act(ownerApi!, "learning.courses.create", { title: `Серия ${stamp.toString(36)}`, kind: "single" })

      const o = owner.tab
      const adminPath = `/authoring/courses/${course}/admin`

      // The library: module 1 saved with its three steps (the training's first and the two added).
      await o.goto(`${origin}${adminPath}?lang=en`)
      await o.getByLabel("Module or step to save").selectOption("module-1")
      await o.getByLabel("Name in the library").fill("Модуль о сортировках")
      await o.getByRole("button", { name: "Save to the library" }).click()
      await poll(() => o.getByLabel("Saved part to insert").locator("option").allTextContents()).toEqual(["Модуль о сортировках (3 steps)"])
      await checkPage(o, "course-admin", adminPath)

      // A copy: its editor opens; the saved module goes into it, with fresh node keys, beside the copied one.
      await o.goto(`${origin}${adminPath}?lang=en`)
      await o.getByLabel("Title of the copy").fill(`${title} — копия`)
      await o.getByRole("button", { name: "Make a copy" }).click()
      await o.waitForURL(/\/authoring\/courses\/[0-9a-f-]+\?lang=en$/)
      const copy = new URL(o.url()).pathname.split("/")[3]!
      expect(copy).not.toBe(course)
      await expect.poll(() => o.locator("h1").textContent()).toBe(`${title} — копия`)
      await o.goto(`${origin}/authoring/courses/${copy}/admin?lang=en`)
      await o.getByRole("button", { name: "Insert into this course" }).click()
      await o.waitForURL(new RegExp(`/authoring/courses/${copy}\\?lang=en$`))
      const copied = await act(ownerApi!, "learning.courses.author_get", { course: copy })
      expect(copied.nodes.filter((node: Body) => node.kind === "step").length).toBe(6)

      // The package: a job whose page offers the file once the worker made it.
      await o.goto(`${origin}${adminPath}?lang=en`)
      await o.getByRole("button", { name: "Prepare the package" }).click()
      await finishJob(o)
      const pack = JSON.parse(await download(owner, o)) as Body
      expect(pack.format).toBe("birzha-course/1")
      await checkPage(o, "job-package", new URL(o.url()).pathname)

      // The import: the package uploaded on the library page becomes a new draft course.
      await o.goto(`${origin}/authoring?lang=en`)
      await o.getByRole("link", { name: "Library of saved parts, package import and courses offered to you" }).click()
      await o.waitForURL(/\/authoring\/library/)
      await checkPage(o, "author-library", "/authoring/library")
      await o.getByLabel("Package file (JSON)").setInputFiles({ name: "course.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(pack)) })
      await o.getByRole("button", { name: "Upload and import" }).click()
      await finishJob(o)
      await o.getByRole("link", { name: "Open the imported course" }).click()
      await o.waitForURL(/\/authoring\/courses\/[0-9a-f-]+\?lang=en$/)
      const imported = new URL(o.url()).pathname.split("/")[3]!
      expect([course, copy]).not.toContain(imported)
      await expect.poll(() => o.locator("h1").textContent()).toBe(title)

      // A bundle: the empty draft holds the published course, required.
      await o.goto(`${origin}/authoring/courses/${series.uuid}/admin?lang=en`)
      await o.getByLabel(title, { exact: true }).selectOption("required")
      await o.getByRole("button", { name: "Save the bundle" }).click()
      await poll(() => o.locator(".bundle-members li").allTextContents()).toEqual([`${title} · Required in the bundle`])
      expect((await act(ownerApi!, "learning.courses.author_get", { course: series.uuid })).kind).toBe("bundle")

      // Groups: a cohort of two places, both learners in it, the instructor its staff.
      const groupsPath = `/teaching/${course}/groups`
      await o.goto(`${origin}/teaching/${course}/roster?lang=en`)
      await o.getByRole("link", { name: "Groups of the runs: members, staff and capacity" }).click()
      await o.waitForURL(new RegExp(`${groupsPath}\\?lang=en$`))
      await o.getByLabel("Group name").fill("Группа А")
      await o.getByLabel("Capacity", { exact: true }).fill("2")
      await o.getByRole("button", { name: "Create the group" }).click()
      const group = o.locator("li.group")
      await poll(() => group.locator(".group-count").textContent()).toBe("0 of 2 places taken")
      for (const n of [1, 2]) {
        await group.getByRole("button", { name: /^Add to the group/ }).click()
        await poll(() => group.locator(".group-count").textContent()).toBe(`${n} of 2 places taken`)
      }
      await group.getByRole("button", { name: /^Attach to the group/ }).click()
      await poll(() => group.locator(".group-staff li").allTextContents()).toEqual([expect.stringContaining("(instructor)")])
      await checkPage(o, "teaching-groups", groupsPath)
      const groups = await act(ownerApi!, "learning.groups.list", { course })
      expect(groups.items.map((g: Body) => [g.name, g.memberCount, g.capacity])).toEqual([["Группа А", 2, 2]])

      // Exports: the grades as CSV, learners as pseudonyms or names.
      await o.goto(`${origin}/teaching/${course}/analytics?lang=en`)
      await o.getByRole("link", { name: "Export learners' grades, roster or activity as CSV" }).click()
      await o.waitForURL(new RegExp(`/teaching/${course}/exports\\?lang=en$`))
      await checkPage(o, "teaching-exports", `/teaching/${course}/exports`)
      await o.goto(`${origin}/teaching/${course}/exports?lang=en`)
      await o.getByLabel("Grades: each learner's course score").check()
      await o.getByRole("button", { name: "Prepare the export" }).click()
      await finishJob(o)
      const csv = await download(owner, o)
      expect(csv.split("\n").filter((line) => line.trim() !== "").length).toBe(3)

      // A learner's own data: from My learning, as JSON.
      const l = learners[0]!.tab
      await l.goto(`${origin}/learning?lang=en`)
      await l.getByRole("button", { name: /^Download my data/ }).click()
      await finishJob(l)
      expect(JSON.parse(await download(learners[0]!, l))).toBeTruthy()
      await checkPage(l, "job-enrollment", new URL(l.url()).pathname)

      // Ownership: offered to the instructor, who accepts on their library page; the former owner stays an instructor.
      await o.goto(`${origin}${adminPath}?lang=en`)
      await o.getByLabel("New owner").selectOption(instructorMe.profile.uuid)
      await o.getByLabel("Message to them").fill("Передаю курс тебе")
      await o.getByRole("button", { name: "Offer the ownership" }).click()
      await poll(() => o.locator(".transfer .tag").first().textContent()).toBe("awaiting an answer")
      await checkPage(o, "course-admin-transfer", adminPath)
      const i = instructor.tab
      await i.goto(`${origin}/authoring/library?lang=en`)
      await checkPage(i, "author-library-offer", "/authoring/library")
      await i.goto(`${origin}/authoring/library?lang=en`)
      await i.getByRole("button", { name: /^Become the owner/ }).click()
      await poll(() => i.locator(".offer .tag").first().textContent()).toBe("accepted")
      const after = await act(instructorApi!, "learning.courses.author_get", { course })
      expect(after.ownerProfileUuid).toBe(instructorMe.profile.uuid)
      await o.goto(`${origin}${adminPath}?lang=en`)
      expect(await o.getByRole("heading", { name: "Ownership transfer" }).count()).toBe(0)

      for (const who of [owner, instructor, ...learners]) expect(who.errors).toEqual([])
    } finally {
      await worker.dispose()
    }
  })
})
