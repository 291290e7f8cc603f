import { Config, Effect } from "effect"
import { DatabaseConfig } from "./database/DatabaseConfig.js"
import { MailConfig } from "./mail/MailerLive.js"
import { MetricsPortConfig } from "./Metrics.js"
import { ServiceConfig } from "./Settings.js"
import { TracingConfig } from "./Tracing.js"

/** Every setting is read before anything starts, so a bad value stops the host with one line per variable. */
export const validateSettings = Effect.asVoid(Config.all([DatabaseConfig, ServiceConfig, MailConfig, TracingConfig, MetricsPortConfig]))
