import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"

// Test-only: an in-memory OAuthClientProvider for the official MCP SDK's client (OAuth.test.ts,
// pages/WebOAuthConsent.test.ts).

/** The official SDK's OAuth client, in memory; the consent is given by `consent` (a browser, or the page's API). */
export const sdkProvider = (redirectUrl: string, consent: (url: URL) => Promise<string>) => {
  let client: OAuthClientInformationMixed | undefined
  let saved: OAuthTokens | undefined
  let verifier = ""
  let pendingCode: Promise<string> | undefined
  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return redirectUrl
    },
    get clientMetadata(): OAuthClientMetadata {
      return { client_name: "SDK agent", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" }
    },
    clientInformation: () => client,
    saveClientInformation: (info) => {
      client = info
    },
    tokens: () => saved,
    saveTokens: (tokens) => {
      saved = tokens
    },
    redirectToAuthorization: (url) => {
      pendingCode = consent(url)
    },
    saveCodeVerifier: (value) => {
      verifier = value
    },
    codeVerifier: () => verifier
  }
  return { provider, code: () => pendingCode!, tokens: () => saved }
}

