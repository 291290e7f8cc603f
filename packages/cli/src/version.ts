declare const __BIRZHA_VERSION__: string | undefined

/** Set by the build from package.json; "development" when run from sources. */
export const version: string = typeof __BIRZHA_VERSION__ === "string" ? __BIRZHA_VERSION__ : "development"
