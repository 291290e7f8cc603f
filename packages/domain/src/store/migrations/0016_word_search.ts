import { statements } from "./statements.js"

/**
 * Search by words: a term matches where a word starts, not inside one (`бот` finds «боты», not
 * «фотообработка»). `birzha_search_words` normalises as before (lower case, ё as е), turns every
 * run of separators into one space and puts a space in front, so the stored text is
 * ` word word …`; a term, normalised the same way, matches as `LIKE '%' || term || '%'` with its
 * leading space, through the same pg_trgm index. Separators are listed by code point, not by the
 * server's locale (PGlite runs under C, where only ASCII is classified): ASCII other than letters
 * and digits, Latin-1 punctuation and symbols (no-break space, «», ·, §, °, ×, ÷), general
 * punctuation and symbols U+2000–U+2BFF (dashes, quotes, …, bullets, arrows), U+2E00–U+2E7F,
 * CJK punctuation, variation selectors and small/fullwidth forms, and emoji. Everything else is a
 * word character. The generated columns are dropped and added again (their indexes with them).
 */
const separators = String.raw`[\u0001-\u002f\u003a-\u0040\u005b-\u0060\u007b-\u00bf\u00d7\u00f7\u2000-\u2bff\u2e00-\u2e7f\u3000-\u303f\ufe00-\ufe6f\uff01-\uff0f\U0001f000-\U0001faff]+`

export const wordSearch = statements(
  `CREATE FUNCTION birzha_search_words(value text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ' ' || btrim(regexp_replace(birzha_search_normalize(value), '${separators}', ' ', 'g'))`,
  `ALTER TABLE publications DROP COLUMN search_text`,
  `ALTER TABLE publications ADD COLUMN search_text text GENERATED ALWAYS AS (
    birzha_search_words(coalesce(approved ->> 'title', '') || ' ' || coalesce(approved ->> 'category', '') || ' ' ||
      coalesce(approved ->> 'description', ''))
  ) STORED`,
  `CREATE INDEX publications_search ON publications USING gin (search_text gin_trgm_ops)
    WHERE approved IS NOT NULL AND NOT hidden AND deleted_at IS NULL`,
  `ALTER TABLE profiles DROP COLUMN search_text`,
  `ALTER TABLE profiles ADD COLUMN search_text text GENERATED ALWAYS AS (
    birzha_search_words(name || ' ' || about || ' ' || categories::text || ' ' || skills::text)
  ) STORED`,
  `CREATE INDEX profiles_search ON profiles USING gin (search_text gin_trgm_ops) WHERE is_public AND deleted_at IS NULL`
)
