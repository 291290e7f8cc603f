import { Config, ConfigError, Either } from "effect"

/**
 * One line per bad setting, naming the variable: what an operator needs to fix the environment,
 * instead of the nested error tree Effect's `Config` produces.
 */
export const describeConfigError = (error: ConfigError.ConfigError): string => {
  const lines: Array<string> = []
  const walk = (e: ConfigError.ConfigError): void => {
    switch (e._op) {
      case "And":
      case "Or":
        walk(e.left)
        walk(e.right)
        return
      case "InvalidData":
      case "MissingData":
      case "SourceUnavailable":
      case "Unsupported": {
        const name = e.path.join("_") || "configuration"
        const message = e.message.replace(/^Expected (.*) but received (.*)$/, "expected $1, got $2")
        lines.push(`${name}: ${message}`)
      }
    }
  }
  walk(error)
  return [...new Set(lines)].join("\n")
}

/** A setting's value is wrong: the error names the variable, so the one line says which to fix. */
export const invalidSetting = (name: string, message: string): ConfigError.ConfigError => ConfigError.InvalidData([name], message)

/** `Config.validate`, but the failure names the variable (a bare `validate` reports an empty path). */
export const requireSetting = <A>(name: string, message: string, valid: (value: A) => boolean) => (config: Config.Config<A>): Config.Config<A> =>
  Config.mapOrFail(config, (value) => (valid(value) ? Either.right(value) : Either.left(invalidSetting(name, message))))
