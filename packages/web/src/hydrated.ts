import { useEffect, useState } from "react"

/**
 * False in the server's render and the browser's first (so hydration matches), true once the
 * page's script runs: forms that need the script stay disabled until then, so a click made
 * before the script loaded never submits the form as a plain GET.
 */
export const useHydrated = () => {
  const [hydrated, setHydrated] = useState(false)
  useEffect(() => setHydrated(true), [])
  return hydrated
}
