import { href } from "../../components/Layout.js"
import type { MessageKey } from "../../i18n.js"
import type { PageProps } from "../types.js"

const titles: Readonly<Record<400 | 404 | 503, MessageKey>> = {
  400: "error.invalidTitle",
  404: "error.notFoundTitle",
  503: "error.unavailableTitle"
}

export const title = ({ data, texts }: Pick<PageProps<"error">, "data" | "texts">) => texts.t(titles[data.status])

/** The page of a refusal: 404 (absent or not public), 400 (the request, named), 503. */
export default function ErrorPage({ data, texts }: PageProps<"error">) {
  const { t, language } = texts
  return (
    <>
      <h1>{title({ data, texts })}</h1>
      <p role={data.status === 404 ? "status" : "alert"}>
        {data.status === 404 ? t("error.notFound") : data.status === 400 ? (data.field === undefined ? t("error.invalidAny") : t("error.invalid", { field: data.field })) : t("error.unavailable")}
      </p>
      <p className="actions">
        <a className="button" href={href("/", language)}>{t("error.toHome")}</a>
        <a className="button button--secondary" href={href("/catalog", language)}>{t("error.toCatalog")}</a>
      </p>
    </>
  )
}
