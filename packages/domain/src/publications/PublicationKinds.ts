import type { PublicationKind } from "./Publication.js"

/**
 * The command prefix of each publication kind (spec: tasks, portfolio, services, articles, jobs,
 * resumes, learning): operation ids `<command>.save`..., scopes `<command>:read|write|submit`.
 */
export const publicationCommands = {
  tasks: "task",
  portfolio: "portfolio",
  services: "service",
  articles: "article",
  jobs: "vacancy",
  resumes: "resume",
  learning: "training"
} as const satisfies Record<string, PublicationKind>

export type PublicationCommand = keyof typeof publicationCommands

export const commandOfKind = (kind: PublicationKind): PublicationCommand =>
  (Object.keys(publicationCommands) as Array<PublicationCommand>).find((command) => publicationCommands[command] === kind)!
