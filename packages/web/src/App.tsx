import { type ComponentType, useEffect } from "react"
import { Layout } from "./components/Layout.js"
import { type Texts, textsOf } from "./i18n.js"
import type { AppState, PageData } from "./model.js"

/** A page's module: its component and its document title. */
export interface PageModule {
  readonly default: ComponentType<{ readonly state: AppState; readonly data: PageData; readonly texts: Texts }>
  readonly title: (props: { readonly state: AppState; readonly data: PageData; readonly texts: Texts }) => string
}

/** The whole page: the shell around the page's component, in the state's language. */
export const App = ({ state, page }: { readonly state: AppState; readonly page: PageModule }) => {
  const texts = textsOf(state.language)
  const Page = page.default
  // When the page became interactive (bench/web-lcp.bench.mjs reads the mark beside LCP).
  useEffect(() => void performance.mark("birzha:hydrated"), [])
  return (
    <Layout state={state} texts={texts}>
      <Page state={state} data={state.data} texts={texts} />
    </Layout>
  )
}
