export type Language = "ru" | "en"

/** `?lang=` first, then the browser's preference; Russian by default. */
export const languageOf = (url: string, acceptLanguage: string | undefined): Language => {
  const asked = new URL(url, "http://host").searchParams.get("lang")
  if (asked === "ru" || asked === "en") return asked
  const preferred = (acceptLanguage ?? "").split(",").map((part) => part.trim().slice(0, 2).toLowerCase())
  const en = preferred.indexOf("en")
  const ru = preferred.indexOf("ru")
  return en >= 0 && (ru < 0 || en < ru) ? "en" : "ru"
}

export const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

const texts = {
  ru: {
    signIn: "Войти",
    unavailable: "Сервис временно недоступен. Попробуйте позже.",
    failed: "Не получилось. Попробуйте ещё раз.",
    signedInAs: "Вы вошли как",
    kinds: {
      task: "Задача",
      service: "Услуга",
      portfolio: "Портфолио",
      article: "Статья",
      vacancy: "Вакансия",
      resume: "Резюме",
      training: "Обучение"
    },
    other: "English"
  },
  en: {
    signIn: "Sign in",
    unavailable: "The service is temporarily unavailable. Try again later.",
    failed: "That did not work. Please try again.",
    signedInAs: "Signed in as",
    kinds: {
      task: "Task",
      service: "Service",
      portfolio: "Portfolio",
      article: "Article",
      vacancy: "Vacancy",
      resume: "Resume",
      training: "Training"
    },
    other: "Русский"
  }
} as const

export type Texts = (typeof texts)["ru"] | (typeof texts)["en"]
export const textsOf = (language: Language): Texts => texts[language]
