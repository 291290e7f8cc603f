import type { Language } from "./i18n.js"

/**
 * What a page renders from: plain JSON, the same on the server and in the browser (the server
 * writes it into the page as a `<script type="application/json">` block; hydration reads it back).
 */
export interface Card {
  readonly uuid: string
  readonly kind: string
  readonly title: string
  readonly category: string
  readonly excerpt: string
  readonly closed: boolean
  readonly authorUuid: string
  readonly authorName?: string
  /** The preview picture: a ready file's uuid, with its alternative text. */
  readonly picture?: { readonly id: string; readonly alt: string }
  /** The headline figure: a task's budget, a service's or training's price, a vacancy's salary. */
  readonly price?: string
}

export interface Picture {
  readonly id: string
  readonly alt: string
  readonly caption: string
}

export interface PublicationView {
  readonly uuid: string
  readonly kind: string
  readonly title: string
  readonly category: string
  readonly description: string
  readonly closed: boolean
  readonly ownerUuid: string
  readonly createdAt?: string
  readonly pictures: ReadonlyArray<Picture>
  /** The kind's own fields (task: budget, deadline; service: price, …), raw; the page labels them. */
  readonly details: Readonly<Record<string, unknown>>
}

export interface ProfileView {
  readonly uuid: string
  readonly name: string
  readonly type: string
  readonly avatarUrl?: string
  readonly about: string
  readonly categories: ReadonlyArray<string>
  readonly skills: ReadonlyArray<string>
  readonly contacts: string
}

export interface ReviewItem {
  readonly uuid: string
  readonly sealed: boolean
  readonly rating?: number
  readonly body?: string
  readonly authorName?: string
  readonly authorUuid?: string
  readonly reply?: string
  readonly publishedAt?: string
}

export interface Reviews {
  readonly count: number
  readonly average: number | null
  readonly items: ReadonlyArray<ReviewItem>
}

export type PageData =
  | { readonly page: "home"; readonly latest: ReadonlyArray<Card> }
  | {
    readonly page: "catalog"
    readonly q: string
    readonly kind: string
    readonly category: string
    readonly cursor: string
    readonly items: ReadonlyArray<Card>
    readonly nextCursor?: string
  }
  | { readonly page: "publication"; readonly publication: PublicationView; readonly author?: { readonly uuid: string; readonly name: string } }
  | { readonly page: "profile"; readonly profile: ProfileView; readonly publications: ReadonlyArray<Card>; readonly reviews?: Reviews }
  | { readonly page: "signIn"; readonly next: string }
  | {
    readonly page: "account"
    readonly email: string
    readonly profiles: ReadonlyArray<{ readonly uuid: string; readonly name: string; readonly type: string; readonly current: boolean }>
  }
  | { readonly page: "signInLink" }
  | { readonly page: "error"; readonly status: 400 | 404 | 503; readonly field?: string }

export type PageName = PageData["page"]

/** Everything the page shell needs besides the page's own data. */
export interface AppState {
  readonly language: Language
  /** The path and query without `lang` (the language switch adds it). */
  readonly path: string
  readonly query: string
  readonly brand: { readonly name: string; readonly logoUrl: string }
  /** Who is signed in, when the request carried a usable session. */
  readonly session?: { readonly name: string }
  readonly data: PageData
}
