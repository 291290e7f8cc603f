import { readFileSync } from "node:fs"
import { relative } from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/** A file that starts another process (the built CLI, npm, tsc), a browser (a page journey) or an embedded database. */
const startsSomethingSlow = /\b(spawn|runToEnd|launchChromium|openJourney|makePgliteClient|embeddedDataDir)\(/

/**
 * Longest first, so that no slow file starts last while the other workers sit idle. Vitest orders
 * by the durations of the previous run when it has them; without them (a clean clone) it orders by
 * file size, which would leave the slowest files, small ones that spend their time in child
 * processes, browsers and embedded databases, to the end. So without durations those go first.
 */
export class SlowFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const sorted = await super.sort(files)
    const known = files.every((file) =>
      this.ctx.cache.getFileTestResults(`${file.project.name}:${relative(this.ctx.config.root, file.moduleId)}`) !== undefined
    )
    if (known) return sorted
    const slow = (file: TestSpecification) => startsSomethingSlow.test(readFileSync(file.moduleId, "utf8"))
    return [...sorted.filter(slow), ...sorted.filter((file) => !slow(file))]
  }
}
