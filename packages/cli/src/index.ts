export { birzha, run } from "./Cli.js"
export { version } from "./version.js"
