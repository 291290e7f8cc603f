import type { Texts } from "../i18n.js"
import type { AppState, PageData } from "../model.js"

/** What every page component gets: the shell's state, its own data and the language's texts. */
export interface PageProps<P extends PageData["page"]> {
  readonly state: AppState
  readonly data: Extract<PageData, { readonly page: P }>
  readonly texts: Texts
}
