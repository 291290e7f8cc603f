import { ConfigError } from "effect"

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
