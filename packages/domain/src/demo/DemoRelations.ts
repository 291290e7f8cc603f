import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { rowsDecoder } from "../store/Rows.js"
import { createHash } from "node:crypto"

/**
 * The demo marketplace's transactions: responses, offers and deals in every state, job
 * responses and invitations, and threads with messages, in Russian, between the demo profiles and
 * about the demo publications. Like the rest of the demo data they are seeded, not commanded: no
 * events and no idempotency keys; each relation carries the history its state implies. Uuids are
 * names of (seed, what, index), so the same seed gives the same rows.
 */

const uuidOf = (seed: number, what: string, index: number): string => {
  const hex = createHash("sha1").update(`birzha-demo-relations:${seed}:${what}:${index}`).digest("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${hex.slice(18, 20)}-${hex.slice(20, 32)}`
}

const pick = <A>(items: ReadonlyArray<A>, index: number): A => items[index % items.length]!

const responseBodies = [
  "Здравствуйте! Делал похожие задачи, могу начать завтра. Примеры работ пришлю в переписке.",
  "Готов взяться. Уточните, пожалуйста, сроки и формат сдачи результата.",
  "Добрый день! Опыт в этой теме больше пяти лет, сделаю аккуратно и в срок.",
  "Могу выполнить за неделю, включая две итерации правок."
]
const offerBodies = [
  "Предлагаю сотрудничество по вашей услуге: нужен результат до конца месяца.",
  "Хотим заказать у вас работу, условия обсудим в переписке.",
  "Индивидуальное предложение: сделаю под ваши требования со скидкой.",
  "Давайте закрепим договорённость: объём и сроки как обсуждали."
]
const jobBodies = [
  "Здравствуйте! Заинтересовала вакансия, опыт подходящий, готов к собеседованию.",
  "Добрый день, приглашаем вас на собеседование по нашей вакансии.",
  "Ваше резюме нам подходит, предлагаем обсудить условия.",
  "Откликаюсь на вакансию: могу выйти через две недели."
]
const messageBodies = [
  "Добрый день! Когда удобно созвониться?",
  "Завтра после обеда подойдёт.",
  "Отправил черновик, посмотрите, пожалуйста.",
  "Спасибо, всё понятно. Вношу правки.",
  "Есть пара вопросов по техническому заданию.",
  "Договорились, жду результат."
]
const budgets = ["5 000 ₽", "12 000 ₽", "до 30 000 ₽", "45 000 ₽", "по договорённости"]
const deadlines = ["3 дня", "неделя", "две недели", "месяц"]

interface RelationRecord {
  uuid: string
  kind: string
  status: string
  initiator: string
  recipient: string
  initiator_role: string
  publication: string | null
  origin: string | null
  body: string
  budget: string | null
  deadline: string | null
  reason: string | null
  auto_complete_at: string | null
  completed_at: string | null
  revision: number
  created_at: string
  updated_at: string
}

interface HistoryRecord { relation: string; status: string; by_role: string; at: string }
interface MessageRecord { uuid: string; thread: string; author: string; body: string; at: string }
interface ThreadRecord { uuid: string; relation: string | null; publication: string | null; low: string; high: string; created_by: string; at: string; last: string }

export interface DemoRelationCounts {
  readonly relations: number
  readonly threads: number
  readonly messages: number
}

const demoProfileUuids = (domain: string) => `SELECT p.uuid FROM profiles p JOIN accounts a ON a.uuid = p.account_uuid WHERE a.email LIKE '%@${domain}'`

/** Removes the demo profiles' relations, threads and messages (before their profiles and publications go). */
export const removeDemoRelations = (domain: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const profiles = demoProfileUuids(domain)
    const threads = `SELECT uuid FROM threads WHERE low_profile_uuid IN (${profiles}) OR high_profile_uuid IN (${profiles})`
    const relations = `SELECT uuid FROM relations WHERE initiator_profile_uuid IN (${profiles}) OR recipient_profile_uuid IN (${profiles})`
    yield* sql`DELETE FROM messages WHERE thread_uuid IN (${sql.literal(threads)})`
    yield* sql`DELETE FROM thread_participants WHERE thread_uuid IN (${sql.literal(threads)})`
    yield* sql`UPDATE relations SET thread_uuid = NULL WHERE uuid IN (${sql.literal(relations)})`
    yield* sql`DELETE FROM threads WHERE uuid IN (${sql.literal(threads)})`
    // Reviews of their deals (DemoAccounts.ts writes one) before the deals.
    yield* sql`DELETE FROM reviews WHERE relation_uuid IN (${sql.literal(relations)})`
    yield* sql`DELETE FROM relation_history WHERE relation_uuid IN (${sql.literal(relations)})`
    yield* sql`DELETE FROM relation_results WHERE relation_uuid IN (${sql.literal(relations)})`
    // Deals first: they point at their origins.
    yield* sql`DELETE FROM relations WHERE kind = 'deal' AND uuid IN (${sql.literal(relations)})`
    yield* sql`DELETE FROM relations WHERE uuid IN (${sql.literal(relations)})`
  })

const decodeProfiles = rowsDecoder(Schema.Struct({ uuid: Schema.String, type: Schema.String }))
const decodePublications = rowsDecoder(Schema.Struct({ uuid: Schema.String, owner: Schema.String }))

/**
 * Seeds the demo relations over the demo profiles and publications already stored: for the first
 * tasks, services, vacancies and resumes (by routing key), responses in each state, offers in
 * each state, a deal for every accepted one in each deal state, job contacts in each state, a
 * thread with a few messages for every deal and accepted job contact, and some direct threads.
 */
export const seedDemoRelations = (seed: number, domain: string, now = Date.now()): Effect.Effect<DemoRelationCounts, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const profiles = yield* Effect.flatMap(
      sql`SELECT p.uuid, p.type FROM profiles p
      WHERE p.uuid IN (${sql.literal(demoProfileUuids(domain))}) ORDER BY p.id`,
      decodeProfiles
    )
    const publications = (kind: string, limit: number) =>
      Effect.flatMap(
        sql`SELECT uuid, owner_profile_uuid AS owner FROM publications
        WHERE demo AND kind = ${kind} AND NOT closed ORDER BY id LIMIT ${limit}`,
        decodePublications
      )
    const tasks = yield* publications("task", 20)
    const services = yield* publications("service", 8)
    const vacancies = yield* publications("vacancy", 8)
    const resumes = yield* publications("resume", 8)
    if (profiles.length < 2) return { relations: 0, threads: 0, messages: 0 }
    const people = profiles.filter((p) => p.type === "Физлицо" || p.type === "Самозанятый")
    const firms = profiles.filter((p) => p.type === "ИП" || p.type === "Компания")
    const others = (pool: ReadonlyArray<{ uuid: string }>, owner: string, index: number) => {
      const candidates = (pool.length > 0 ? pool : profiles).filter((p) => p.uuid !== owner)
      return pick(candidates, index).uuid
    }

    const relations: Array<RelationRecord> = []
    const history: Array<HistoryRecord> = []
    const results: Array<{ relation: string; body: string; at: string }> = []
    const threads: Array<ThreadRecord> = []
    const messages: Array<MessageRecord> = []
    let n = 0
    const at = (daysAgo: number, minutes = 0) => new Date(now - daysAgo * 86_400_000 + minutes * 60_000).toISOString()
    const add = (record: Omit<RelationRecord, "revision" | "updated_at" | "auto_complete_at" | "completed_at" | "reason">, steps: ReadonlyArray<readonly [string, string]>, extra: Partial<RelationRecord> = {}) => {
      const start = Date.parse(record.created_at)
      steps.forEach(([status, byRole], i) => history.push({ relation: record.uuid, status, by_role: byRole, at: new Date(start + i * 3_600_000).toISOString() }))
      const updated = new Date(start + (steps.length - 1) * 3_600_000).toISOString()
      relations.push({ reason: null, auto_complete_at: null, completed_at: null, ...record, revision: steps.length, updated_at: updated, ...extra })
      return updated
    }
    const thread = (relation: string | null, publication: string | null, a: string, b: string, daysAgo: number, count: number) => {
      const uuid = uuidOf(seed, "thread", threads.length)
      const [low, high] = a < b ? [a, b] : [b, a]
      let last = at(daysAgo)
      for (let i = 0; i < count; i++) {
        last = at(daysAgo, 30 * (i + 1))
        messages.push({ uuid: uuidOf(seed, "message", messages.length), thread: uuid, author: i % 2 === 0 ? a : b, body: pick(messageBodies, n + i), at: last })
      }
      threads.push({ uuid, relation, publication, low, high, created_by: a, at: at(daysAgo), last })
    }

    const dealStates = ["active", "results_submitted", "completed", "terminated"] as const
    let deals = 0
    /** A deal from an accepted origin, in the next deal state, with its thread. */
    const deal = (origin: RelationRecord, acceptedAt: string, customerRole: string) => {
      const state = dealStates[deals % dealStates.length]!
      const uuid = uuidOf(seed, "deal", deals++)
      const contractorRole = "contractor"
      const steps: Array<readonly [string, string]> = [["active", customerRole]]
      const extra: Partial<RelationRecord> = {}
      if (state !== "active") steps.push(["results_submitted", contractorRole])
      if (state === "results_submitted") extra.auto_complete_at = new Date(Date.parse(acceptedAt) + 3_600_000 + 14 * 86_400_000).toISOString()
      if (state === "completed") {
        steps.push(["completed", "customer"])
        extra.completed_at = new Date(Date.parse(acceptedAt) + 2 * 3_600_000).toISOString()
      }
      if (state === "terminated") {
        steps.splice(1, 1, ["terminated", "customer"])
        extra.reason = "Планы изменились, работа больше не нужна"
      }
      add({ ...origin, uuid, kind: "deal", status: state, created_at: acceptedAt, origin: origin.uuid }, steps, extra)
      if (state !== "active" && state !== "terminated") {
        results.push({ relation: uuid, body: "Работа выполнена: файлы и описание во вложении.", at: new Date(Date.parse(acceptedAt) + 3_600_000).toISOString() })
      }
      thread(origin.uuid, origin.publication, origin.initiator, origin.recipient, Number((now - Date.parse(acceptedAt)) / 86_400_000), 3 + (deals % 3))
    }

    // Responses to tasks: pending, shortlisted, accepted (with a deal), declined, withdrawn.
    const responseStates = ["pending", "shortlisted", "accepted", "declined", "withdrawn"] as const
    tasks.forEach((task, i) => {
      const state = responseStates[i % responseStates.length]!
      const record = {
        uuid: uuidOf(seed, "response", i), kind: "response", status: state, initiator: others(people, task.owner, i * 7 + 3),
        recipient: task.owner, initiator_role: "contractor", publication: task.uuid, origin: null, body: pick(responseBodies, i),
        budget: pick(budgets, i), deadline: pick(deadlines, i), created_at: at(30 - i)
      }
      const steps: Array<readonly [string, string]> = [["pending", "contractor"]]
      if (state !== "pending") steps.push([state, state === "withdrawn" ? "contractor" : "customer"])
      const updated = add(record, steps, state === "declined" ? { reason: "Выбрали другого исполнителя" } : {})
      if (state === "accepted") deal({ ...record, revision: 1, updated_at: updated, reason: null, auto_complete_at: null, completed_at: null }, updated, "customer")
      else if (state === "pending" || state === "shortlisted") thread(record.uuid, task.uuid, record.initiator, record.recipient, 29 - i, 2)
      n++
    })
    // Offers: ordering a service (the sender is the customer) and custom offers (the service's owner is the contractor).
    const offerStates = ["pending", "accepted", "declined", "withdrawn"] as const
    services.forEach((service, i) => {
      const state = offerStates[i % offerStates.length]!
      const custom = i % 2 === 1
      const other = others(custom ? profiles : firms, service.owner, i * 5 + 1)
      const record = {
        uuid: uuidOf(seed, "offer", i), kind: "offer", status: state, initiator: custom ? service.owner : other,
        recipient: custom ? other : service.owner, initiator_role: custom ? "contractor" : "customer", publication: service.uuid,
        origin: null, body: pick(offerBodies, i), budget: pick(budgets, i + 2), deadline: pick(deadlines, i + 1), created_at: at(25 - i)
      }
      const steps: Array<readonly [string, string]> = [["pending", record.initiator_role]]
      if (state !== "pending") steps.push([state, state === "withdrawn" ? record.initiator_role : (custom ? "customer" : "contractor")])
      const updated = add(record, steps, state === "declined" ? { reason: "Сейчас нет свободного времени" } : {})
      if (state === "accepted") deal({ ...record, revision: 1, updated_at: updated, reason: null, auto_complete_at: null, completed_at: null }, updated, custom ? "customer" : "customer")
      n++
    })
    // Job contacts: responses to vacancies and invitations by resume, in each state.
    const jobStates = ["accepted", "declined", "withdrawn"] as const
    vacancies.forEach((vacancy, i) => {
      const state = i % 4 === 0 ? "applied" : jobStates[i % 3]!
      const record = {
        uuid: uuidOf(seed, "job_response", i), kind: "job_response", status: state, initiator: others(people, vacancy.owner, i * 3 + 2),
        recipient: vacancy.owner, initiator_role: "candidate", publication: vacancy.uuid, origin: null, body: pick(jobBodies, i),
        budget: pick(budgets, i), deadline: null, created_at: at(20 - i)
      }
      const steps: Array<readonly [string, string]> = [["applied", "candidate"]]
      if (state !== "applied") steps.push([state, state === "withdrawn" ? "candidate" : "employer"])
      add(record, steps)
      if (state === "accepted") thread(record.uuid, vacancy.uuid, record.recipient, record.initiator, 19 - i, 4)
    })
    resumes.forEach((resume, i) => {
      const state = i % 4 === 0 ? "invited" : jobStates[i % 3]!
      const record = {
        uuid: uuidOf(seed, "job_invitation", i), kind: "job_invitation", status: state, initiator: others(firms, resume.owner, i * 3 + 1),
        recipient: resume.owner, initiator_role: "employer", publication: resume.uuid, origin: null, body: pick(jobBodies, i + 1),
        budget: pick(budgets, i + 1), deadline: null, created_at: at(18 - i)
      }
      const steps: Array<readonly [string, string]> = [["invited", "employer"]]
      if (state !== "invited") steps.push([state, state === "withdrawn" ? "employer" : "candidate"])
      add(record, steps)
      if (state === "accepted") thread(record.uuid, resume.uuid, record.initiator, record.recipient, 17 - i, 3)
    })
    // Direct threads: questions about services before any offer.
    services.slice(0, 4).forEach((service, i) => thread(null, service.uuid, others(profiles, service.owner, i * 11 + 4), service.owner, 10 - i, 2 + i))

    if (relations.length === 0) return { relations: 0, threads: 0, messages: 0 }
    // Origins before deals (a deal points at its origin).
    const ordered = [...relations.filter((r) => r.kind !== "deal"), ...relations.filter((r) => r.kind === "deal")]
    yield* sql`INSERT INTO relations (uuid, kind, status, initiator_profile_uuid, recipient_profile_uuid, initiator_role, publication_uuid,
        origin_relation_uuid, body, budget, deadline, reason, auto_complete_at, completed_at, revision, created_at, updated_at)
      SELECT r.uuid, r.kind, r.status, r.initiator, r.recipient, r.initiator_role, r.publication, r.origin, r.body, r.budget, r.deadline,
        r.reason, r.auto_complete_at, r.completed_at, r.revision, r.created_at, r.updated_at
      FROM json_to_recordset(${JSON.stringify(ordered)}::json) AS r(uuid uuid, kind text, status text, initiator uuid, recipient uuid,
        initiator_role text, publication uuid, origin uuid, body text, budget text, deadline text, reason text,
        auto_complete_at timestamptz, completed_at timestamptz, revision int, created_at timestamptz, updated_at timestamptz)`
    yield* sql`INSERT INTO relation_history (relation_uuid, status, by_role, at)
      SELECT h.relation, h.status, h.by_role, h.at FROM json_to_recordset(${JSON.stringify(history)}::json)
        AS h(relation uuid, status text, by_role text, at timestamptz)`
    if (results.length > 0) {
      yield* sql`INSERT INTO relation_results (relation_uuid, version, body, submitted_at)
        SELECT x.relation, 1, x.body, x.at FROM json_to_recordset(${JSON.stringify(results)}::json) AS x(relation uuid, body text, at timestamptz)`
    }
    if (threads.length > 0) {
      yield* sql`INSERT INTO threads (uuid, relation_uuid, publication_uuid, low_profile_uuid, high_profile_uuid, created_by_profile_uuid,
          last_message_at, revision, created_at)
        SELECT t.uuid, t.relation, t.publication, t.low, t.high, t.created_by, t.last,
          1 + (SELECT count(*) FROM json_to_recordset(${JSON.stringify(messages)}::json) AS m(thread uuid) WHERE m.thread = t.uuid), t.at
        FROM json_to_recordset(${JSON.stringify(threads)}::json) AS t(uuid uuid, relation uuid, publication uuid, low uuid, high uuid,
          created_by uuid, at timestamptz, last timestamptz)`
      yield* sql`INSERT INTO messages (uuid, thread_uuid, author_profile_uuid, body, created_at)
        SELECT m.uuid, m.thread, m.author, m.body, m.at FROM json_to_recordset(${JSON.stringify(messages)}::json)
          AS m(uuid uuid, thread uuid, author uuid, body text, at timestamptz) ORDER BY m.at`
      // Both participants; the author of the first message has read everything, the other the first half.
      yield* sql`INSERT INTO thread_participants (thread_uuid, profile_uuid, last_read_seq, last_message_at)
        SELECT t.uuid, p.profile, coalesce((SELECT max(m.seq) FROM messages m WHERE m.thread_uuid = t.uuid
            AND (p.profile = t.created_by_profile_uuid OR m.created_at <= t.created_at + (t.last_message_at - t.created_at) / 2)), 0),
          t.last_message_at
        FROM threads t CROSS JOIN LATERAL (VALUES (t.low_profile_uuid), (t.high_profile_uuid)) AS p(profile)
        WHERE ${sql.in("t.uuid", threads.map((t) => t.uuid))}`
    }
    return { relations: relations.length, threads: threads.length, messages: messages.length }
  })
