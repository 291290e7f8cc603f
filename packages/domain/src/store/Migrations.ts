import { Migrator, SqlClient } from "@effect/sql"
import { foundation } from "./migrations/0001_foundation.js"
import { accounts } from "./migrations/0002_accounts.js"
import { developmentMailbox } from "./migrations/0003_development_mailbox.js"
import { publications } from "./migrations/0004_publications.js"
import { files } from "./migrations/0005_files.js"
import { comments } from "./migrations/0006_comments.js"
import { events } from "./migrations/0007_events.js"
import { keys } from "./migrations/0008_keys.js"
import { webhooks } from "./migrations/0009_webhooks.js"
import { integrationCommands } from "./migrations/0010_integration_commands.js"
import { retention } from "./migrations/0011_retention.js"
import { relations } from "./migrations/0012_relations.js"
import { threads } from "./migrations/0013_threads.js"
import { reviewsFavoritesComplaints } from "./migrations/0014_reviews_favorites_complaints.js"
import { automations } from "./migrations/0015_automations.js"
import { wordSearch } from "./migrations/0016_word_search.js"
import { pendingApprovals } from "./migrations/0017_pending_approvals.js"
import { learning } from "./migrations/0018_learning.js"
import { profileModeration } from "./migrations/0019_profile_moderation.js"
import { learningEnrollments } from "./migrations/0020_learning_enrollments.js"
import { learningSubmissions } from "./migrations/0021_learning_submissions.js"
import { learningStaff } from "./migrations/0022_learning_staff.js"
import { learningCommunity } from "./migrations/0023_learning_community.js"
import { learningNotifier } from "./migrations/0024_learning_notifier.js"
import { learningGrading } from "./migrations/0025_learning_grading.js"
import { learningReviews } from "./migrations/0026_learning_reviews.js"
import { learningCorrections } from "./migrations/0027_learning_corrections.js"
import { learningGroups } from "./migrations/0028_learning_groups.js"
import { learningTeaching } from "./migrations/0029_learning_teaching.js"
import { dueMoments } from "./migrations/0030_due_moments.js"
import { regradeCommitWakeup } from "./migrations/0031_regrade_commit_wakeup.js"
import { outboxTrace } from "./migrations/0032_outbox_trace.js"
import { operators } from "./migrations/0033_operators.js"
import { oauth } from "./migrations/0034_oauth.js"
import { embeddedWorkSignals } from "./migrations/0035_embedded_work_signals.js"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

/**
 * Forward-only migrations, identical on a Postgres server and on embedded PGlite: one file each
 * in `migrations/`, never edited once released; a change is a new file with the next id.
 */
export const migrations: ReadonlyArray<readonly [id: number, name: string, run: Effect.Effect<void, unknown, SqlClient.SqlClient>]> = [
  [1, "foundation", foundation],
  [2, "accounts", accounts],
  [3, "development_mailbox", developmentMailbox],
  [4, "publications", publications],
  [5, "files", files],
  [6, "comments", comments],
  [7, "events", events],
  [8, "keys", keys],
  [9, "webhooks", webhooks],
  [10, "integration_commands", integrationCommands],
  [11, "retention", retention],
  [12, "relations", relations],
  [13, "threads", threads],
  [14, "reviews_favorites_complaints", reviewsFavoritesComplaints],
  [15, "automations", automations],
  [16, "word_search", wordSearch],
  [17, "pending_approvals", pendingApprovals],
  [18, "learning", learning],
  [19, "profile_moderation", profileModeration],
  [20, "learning_enrollments", learningEnrollments],
  [21, "learning_submissions", learningSubmissions],
  [22, "learning_staff", learningStaff],
  [23, "learning_community", learningCommunity],
  [24, "learning_notifier", learningNotifier],
  [25, "learning_grading", learningGrading],
  [26, "learning_reviews", learningReviews],
  [27, "learning_corrections", learningCorrections],
  [28, "learning_groups", learningGroups],
  [29, "learning_teaching", learningTeaching],
  [30, "due_moments", dueMoments],
  [31, "regrade_commit_wakeup", regradeCommitWakeup],
  [32, "outbox_trace", outboxTrace],
  [33, "operators", operators],
  [34, "oauth", oauth],
  [35, "embedded_work_signals", embeddedWorkSignals]
]

/** The id readiness waits for: the host is ready only once this one is applied. */
export const latestMigrationId: number = Math.max(...migrations.map(([id]) => id))

/** The table the migrator records applied migrations in. */
export const migrationsTable = "birzha_migrations"

// Any constant works; it only has to be the same in every process migrating one database.
const migrationLock = 0x6269727a68 // "birzh"

/**
 * Applies pending migrations. Concurrent starts (several hosts on one server) queue on an
 * advisory lock, so each migration runs exactly once. Returns the ids applied now.
 */
export const runMigrations: Effect.Effect<ReadonlyArray<readonly [number, string]>, Migrator.MigrationError | SqlError, SqlClient.SqlClient> =
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(
      Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${migrationLock})`
        yield* sql`CREATE TABLE IF NOT EXISTS ${sql(migrationsTable)} (
          migration_id integer PRIMARY KEY,
          created_at timestamptz NOT NULL DEFAULT now(),
          name text NOT NULL
        )`
        return yield* Migrator.make({})({
          table: migrationsTable,
          loader: Effect.succeed(migrations.map(([id, name, run]) => [id, name, Effect.succeed(run)] as const))
        })
      })
    )
  })

