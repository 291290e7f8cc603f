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
    signInTitle: "Вход в Биржу",
    emailLabel: "Электронная почта",
    sendCode: "Получить код",
    codeSent: "Мы отправили письмо с кодом и ссылкой для входа. Введите код из письма или откройте ссылку.",
    codeLabel: "Код из письма (6 цифр)",
    signIn: "Войти",
    otherEmail: "Другой адрес",
    invalidEmail: "Проверьте адрес электронной почты.",
    invalidCode: "Код неверный, устарел или уже использован. Запросите новый.",
    rateLimited: "Слишком много попыток. Повторите через {s} с.",
    unavailable: "Сервис временно недоступен. Попробуйте позже.",
    failed: "Не получилось. Попробуйте ещё раз.",
    linkTitle: "Вход по ссылке",
    linkExplain: "Нажмите кнопку, чтобы войти в Биржу на этом устройстве.",
    linkButton: "Войти на этом устройстве",
    linkMissing: "Ссылка неполная. Откройте её из письма целиком или запросите новую.",
    invalidLink: "Ссылка больше не действует. Запросите новое письмо.",
    accountGone: "Этот аккаунт удалён.",
    accountTitle: "Аккаунт",
    signedInAs: "Вы вошли как",
    profiles: "Профили",
    acting: "действующий",
    switchTo: "Перейти",
    signOut: "Выйти",
    integrations: "Интеграции: ключи API и MCP",
    approvals: "Ждут вашего подтверждения",
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
    signInTitle: "Sign in to Birzha",
    emailLabel: "Email",
    sendCode: "Send me a code",
    codeSent: "We emailed you a sign-in code and link. Enter the code from the email, or open the link.",
    codeLabel: "Code from the email (6 digits)",
    signIn: "Sign in",
    otherEmail: "Use another address",
    invalidEmail: "Check the email address.",
    invalidCode: "The code is wrong, expired or already used. Request a new one.",
    rateLimited: "Too many attempts. Try again in {s} s.",
    unavailable: "The service is temporarily unavailable. Try again later.",
    failed: "That did not work. Please try again.",
    linkTitle: "Sign in with a link",
    linkExplain: "Press the button to sign in to Birzha on this device.",
    linkButton: "Sign in on this device",
    linkMissing: "The link is incomplete. Open the whole link from the email, or request a new one.",
    invalidLink: "This link no longer works. Request a new email.",
    accountGone: "This account has been deleted.",
    accountTitle: "Account",
    signedInAs: "Signed in as",
    profiles: "Profiles",
    acting: "acting",
    switchTo: "Switch",
    signOut: "Sign out",
    integrations: "Integrations: API keys and MCP",
    approvals: "Waiting for your approval",
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
