import { anonymous, type CatalogPublication, type Profile, type Publication, PublicationKind } from "@birzha/domain"
import { EncodedJson, Operations, type OperationsService } from "@birzha/domain/server"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either } from "effect"
import { escapeHtml, type Language, languageOf, textsOf } from "./Language.js"
import { layout, pageSecurityHeaders } from "./Layout.js"
import { pathUuid } from "./PageSession.js"

/** The public pages: what the service is, the catalog with search, one publication, one public profile. */
export const publicPageRoutes = [
  { method: "GET", path: "/" },
  { method: "GET", path: "/catalog" },
  { method: "GET", path: "/p/{uuid}" },
  { method: "GET", path: "/u/{uuid}" }
] as const

const texts = {
  ru: {
    homeTitle: "Биржа: задачи, услуги и специалисты",
    about: "Биржа — площадка, где люди и компании публикуют задачи, услуги, портфолио, статьи, вакансии, резюме и обучение, " +
      "откликаются друг на друга, переписываются и заключают сделки. Всё, что видно здесь, прошло модерацию.",
    forDevelopers: "Для разработчиков: у сервиса открытый HTTP API, вебхуки и MCP для агентов; значимые действия интеграций " +
      "выполняются только после вашего подтверждения.",
    navLabel: "Разделы",
    catalog: "Каталог",
    signIn: "Войти",
    apiDocs: "Справочник API",
    sdk: "SDK для TypeScript (@birzha/client)",
    latest: "Новое в каталоге",
    catalogTitle: "Каталог",
    searchLabel: "Слова для поиска",
    kindLabel: "Вид",
    allKinds: "Все виды",
    find: "Найти",
    results: "Публикации",
    nothing: "Ничего не найдено.",
    next: "Дальше",
    author: "Автор",
    category: "Категория",
    details: "Подробности",
    publications: "Публикации",
    notFound: "Такой страницы нет или она больше не публична.",
    invalid: "Проверьте запрос",
    unavailable: "Сервис временно недоступен. Попробуйте позже.",
    profileType: "Тип",
    skills: "Навыки",
    categories: "Направления",
    contacts: "Контакты",
    closed: "Закрыто"
  },
  en: {
    homeTitle: "Birzha: tasks, services and specialists",
    about: "Birzha is a marketplace where people and companies publish tasks, services, portfolios, articles, vacancies, resumes " +
      "and trainings, respond to each other, talk and make deals. Everything shown here has passed moderation.",
    forDevelopers: "For developers: the service has an open HTTP API, webhooks and MCP for agents; an integration's significant " +
      "actions run only after you approve them.",
    navLabel: "Sections",
    catalog: "Catalog",
    signIn: "Sign in",
    apiDocs: "API reference",
    sdk: "TypeScript SDK (@birzha/client)",
    latest: "New in the catalog",
    catalogTitle: "Catalog",
    searchLabel: "Words to search for",
    kindLabel: "Kind",
    allKinds: "All kinds",
    find: "Search",
    results: "Publications",
    nothing: "Nothing found.",
    next: "Next",
    author: "Author",
    category: "Category",
    details: "Details",
    publications: "Publications",
    notFound: "There is no such page, or it is no longer public.",
    invalid: "Check the request",
    unavailable: "The service is temporarily unavailable. Try again later.",
    profileType: "Type",
    skills: "Skills",
    categories: "Fields",
    contacts: "Contacts",
    closed: "Closed"
  }
} as const

type PageTexts = (typeof texts)[Language]

const sdkUrl = "https://www.npmjs.com/package/@birzha/client"

const html = (language: Language, path: string, title: string, body: string, status = 200) =>
  HttpServerResponse.html(layout({ language, texts: textsOf(language), title, path, body })).pipe(
    HttpServerResponse.setStatus(status),
    HttpServerResponse.setHeaders(pageSecurityHeaders)
  )

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)
const text = (data: Record<string, unknown>, field: string) => typeof data[field] === "string" ? data[field] : ""
const excerpt = (value: string, max = 240) => value.length <= max ? value : `${value.slice(0, max).trimEnd()}…`

/** One publication in a list: its title (a link), kind, category, the start of its description. */
const card = (language: Language, p: Publication | CatalogPublication, withAuthor = true) => {
  const t = texts[language]
  const data = isObject(p.approved) ? p.approved : {}
  return `<li><article aria-labelledby="p-${p.uuid}">
<h3 id="p-${p.uuid}"><a href="/p/${p.uuid}?lang=${language}">${escapeHtml(text(data, "title"))}</a></h3>
<p class="meta">${textsOf(language).kinds[p.kind]} · ${escapeHtml(text(data, "category"))}${p.closed ? ` · ${t.closed}` : ""}${
    withAuthor ? ` · <a href="/u/${p.ownerUuid}?lang=${language}">${t.author}</a>` : ""
  }</p>
<p>${escapeHtml(excerpt(text(data, "description")))}</p>
</article></li>`
}

const list = (language: Language, items: ReadonlyArray<Publication>, withAuthor = true) =>
  items.length === 0 ? `<p>${texts[language].nothing}</p>` : `<ul class="cards">\n${items.map((p) => card(language, p, withAuthor)).join("\n")}\n</ul>`

/** A refused call as a page: 404 for absent, 400 naming the field for bad input, 503 otherwise. */
const refusal = (language: Language, path: string, answer: Refused) => {
  const t = texts[language]
  if (answer.status === 404) return html(language, path, t.notFound, `<p role="status">${t.notFound}</p>`, 404)
  if (answer.status === 400) return html(language, path, t.invalid, `<p role="alert">${escapeHtml(answer.message)}</p>`, 400)
  return html(language, path, t.unavailable, `<p role="alert">${t.unavailable}</p>`, 503)
}

interface Refused {
  readonly status: number
  readonly message: string
}

interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor?: string
}

/**
 * The pages read through the operations as anyone does over the API (anonymous caller, the same
 * checks, bounds and answers): the wire answer, or the refusal with its status and message.
 */
const reads = (operations: OperationsService) => {
  const run = <A>(operationId: string, input: { readonly path?: Record<string, string>; readonly urlParams?: Record<string, string> }) =>
    Effect.map(operations.invoke(operationId, anonymous, input), (answer): Either.Either<A, Refused> => {
      const body: unknown = answer.body instanceof EncodedJson ? JSON.parse(answer.body.json) : answer.body
      if (answer.status < 400) return Either.right(body as A)
      const error = isObject(body) && isObject(body["error"]) ? body["error"] : {}
      return Either.left({ status: answer.status, message: typeof error["message"] === "string" ? error["message"] : "" })
    })
  return {
    publications: (urlParams: Record<string, string>) => run<Page<Publication>>("listPublications", { urlParams }),
    publication: (uuid: string) => run<Publication>("getPublication", { path: { uuid } }),
    profile: (uuid: string) => run<Profile>("getProfile", { path: { uuid } })
  }
}

const requestOf = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const url = new URL(request.url, "http://host")
  return { url, language: languageOf(request.url, request.headers["accept-language"]) }
})

const home = (read: ReturnType<typeof reads>) =>
  Effect.gen(function*() {
    const { language } = yield* requestOf
    const t = texts[language]
    const latest = yield* read.publications({ limit: "10" })
    if (Either.isLeft(latest)) return refusal(language, "/", latest.left)
    return html(language, "/", t.homeTitle, `<p>${t.about}</p>
<nav aria-label="${t.navLabel}">
<ul>
<li><a href="/catalog?lang=${language}">${t.catalog}</a></li>
<li><a href="/sign-in?lang=${language}">${t.signIn}</a></li>
<li><a href="/api/docs">${t.apiDocs}</a></li>
<li><a href="${sdkUrl}">${t.sdk}</a></li>
</ul>
</nav>
<p>${t.forDevelopers}</p>
<section aria-labelledby="latest">
<h2 id="latest">${t.latest}</h2>
${list(language, latest.right.items)}
</section>`)
  })

const catalogPage = (read: ReturnType<typeof reads>) =>
  Effect.gen(function*() {
    const { language, url } = yield* requestOf
    const t = texts[language]
    const q = url.searchParams.get("q") ?? ""
    const kind = url.searchParams.get("kind") ?? ""
    const cursor = url.searchParams.get("cursor") ?? ""
    const params: Record<string, string> = {
      limit: "20",
      ...(q.trim() === "" ? {} : { q }),
      ...(kind === "" ? {} : { kind }),
      ...(cursor === "" ? {} : { cursor })
    }
    const found = yield* read.publications(params)
    if (Either.isLeft(found)) return refusal(language, "/catalog", found.left)
    const options = PublicationKind.literals.map((k) =>
      `<option value="${k}"${k === kind ? " selected" : ""}>${textsOf(language).kinds[k]}</option>`
    ).join("")
    const next = found.right.nextCursor === undefined
      ? ""
      : `<p><a rel="next" href="/catalog?${new URLSearchParams({ lang: language, ...(q === "" ? {} : { q }), ...(kind === "" ? {} : { kind }), cursor: found.right.nextCursor })}">${t.next}</a></p>`
    return html(language, "/catalog", t.catalogTitle, `<form method="get" action="/catalog" role="search">
<input type="hidden" name="lang" value="${language}">
<label for="q">${t.searchLabel}</label>
<input id="q" name="q" type="search" maxlength="4096" value="${escapeHtml(q)}">
<label for="kind">${t.kindLabel}</label>
<select id="kind" name="kind"><option value="">${t.allKinds}</option>${options}</select>
<button type="submit">${t.find}</button>
</form>
<section aria-labelledby="results">
<h2 id="results">${t.results}</h2>
${list(language, found.right.items)}
${next}
</section>`)
  })

/** The approved data beyond title, category and description, as a list of its plain values. */
const details = (t: PageTexts, data: Record<string, unknown>) => {
  const rows = Object.entries(data)
    .filter(([name, value]) => !["title", "category", "description"].includes(name) && (typeof value === "string" ? value !== "" : typeof value === "number" || typeof value === "boolean"))
    .map(([name, value]) => `<dt>${escapeHtml(name)}</dt><dd>${escapeHtml(String(value))}</dd>`)
  return rows.length === 0 ? "" : `<h2>${t.details}</h2>\n<dl>${rows.join("")}</dl>`
}

/** A page of one record at `{prefix}/{uuid}`: read it, answer a refusal as its page, else render it. */
const recordPage = <A>(
  prefix: "/p" | "/u",
  readOne: (uuid: string) => Effect.Effect<Either.Either<A, Refused>>,
  render: (found: A, page: { readonly language: Language; readonly t: PageTexts; readonly path: string }) => Effect.Effect<HttpServerResponse.HttpServerResponse>
) =>
  Effect.gen(function*() {
    const { language, url } = yield* requestOf
    const uuid = pathUuid(url.pathname)
    const path = `${prefix}/${uuid}`
    const found = yield* readOne(uuid)
    if (Either.isLeft(found)) return refusal(language, path, found.left)
    return yield* render(found.right, { language, t: texts[language], path })
  })

const publicationPage = (read: ReturnType<typeof reads>) =>
  recordPage("/p", read.publication, (p, { language, path, t }) => Effect.gen(function*() {
    const data = isObject(p.approved) ? p.approved : {}
    const author = yield* read.profile(p.ownerUuid)
    const byline = Either.isRight(author)
      ? `<p>${t.author}: <a href="/u/${p.ownerUuid}?lang=${language}" id="author">${escapeHtml(author.right.name)}</a></p>`
      : ""
    return html(language, path, text(data, "title"), `<p class="meta">${textsOf(language).kinds[p.kind]} · ${t.category}: ${escapeHtml(text(data, "category"))}${
      p.closed ? ` · ${t.closed}` : ""
    }</p>
${byline}
<div class="description">${escapeHtml(text(data, "description")).split(/\n{2,}/).map((part) => `<p>${part}</p>`).join("\n")}</div>
${details(t, data)}`)
  }))

const profilePage = (read: ReturnType<typeof reads>) =>
  recordPage("/u", read.profile, (profile, { language, path, t }) => Effect.gen(function*() {
    const own = yield* read.publications({ ownerUuid: profile.uuid, limit: "20" })
    const about = typeof profile["about"] === "string" ? profile["about"] : ""
    const facts = [
      `<dt>${t.profileType}</dt><dd>${escapeHtml(profile.type)}</dd>`,
      ...(profile.categories === undefined || profile.categories.length === 0 ? [] : [`<dt>${t.categories}</dt><dd>${escapeHtml(profile.categories.join(", "))}</dd>`]),
      ...(profile.skills === undefined || profile.skills.length === 0
        ? []
        : [`<dt>${t.skills}</dt><dd>${escapeHtml(profile.skills.map((s) => isObject(s) && typeof s["name"] === "string" ? s["name"] : "").filter((s) => s !== "").join(", "))}</dd>`]),
      ...(profile.contacts === undefined || profile.contacts === "" ? [] : [`<dt>${t.contacts}</dt><dd>${escapeHtml(profile.contacts)}</dd>`])
    ].join("")
    return html(language, path, profile.name, `${about === "" ? "" : `<p>${escapeHtml(about)}</p>`}
<dl>${facts}</dl>
<section aria-labelledby="own">
<h2 id="own">${t.publications}</h2>
${Either.isRight(own) ? list(language, own.right.items, false) : `<p role="alert">${t.unavailable}</p>`}
</section>`)
  }))

/** `/`, `/catalog`, `/p/{uuid}`, `/u/{uuid}`: server-rendered, no script, every read through `Operations`. */
export const PublicPageRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const read = reads(yield* Operations)
    yield* router.get("/", home(read))
    yield* router.get("/catalog", catalogPage(read))
    yield* router.get("/p/:uuid", publicationPage(read))
    yield* router.get("/u/:uuid", profilePage(read))
  })
)
