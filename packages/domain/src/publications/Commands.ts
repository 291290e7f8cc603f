import { InvalidPublication, InvalidTask } from "../api/ApiError.js"
import { codePoints } from "../api/Common.js"
import { ArticleData, PortfolioData, referencedFiles, ResumeData, ServiceData, TrainingData, VacancyData } from "./MediaData.js"
import { publicationCommandsOf } from "./Publications.js"
import { minSubmitDescription, TaskData } from "./TaskData.js"

const mediaRules = { references: referencedFiles }
const invalidTask = (message: string) => new InvalidTask({ message })
const invalidPublication = (message: string) => new InvalidPublication({ message })

/**
 * The owner commands of every kind, one implementation over each kind's data schema: HTTP, the
 * approval flow, MCP and automations call these.
 */
export const publicationCommands = {
  tasks: publicationCommandsOf("task", TaskData, "tasks", invalidTask, {
    invalidSave: invalidTask,
    unsubmittable: (data) =>
      codePoints(data.description.trim()) >= minSubmitDescription
        ? undefined
        : `a task needs a description of at least ${minSubmitDescription} characters to be submitted`
  }),
  portfolio: publicationCommandsOf("portfolio", PortfolioData, "portfolio", invalidPublication, mediaRules),
  services: publicationCommandsOf("service", ServiceData, "services", invalidPublication, mediaRules),
  articles: publicationCommandsOf("article", ArticleData, "articles", invalidPublication, mediaRules),
  jobs: publicationCommandsOf("vacancy", VacancyData, "jobs", invalidPublication, mediaRules),
  resumes: publicationCommandsOf("resume", ResumeData, "resumes", invalidPublication, mediaRules),
  learning: publicationCommandsOf("training", TrainingData, "learning", invalidPublication, mediaRules)
} as const
