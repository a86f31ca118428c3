import { isPlainObject } from './merge.js';

/** Trims every string in a JSON value, recursively. */
export function trimStrings<T>(value: T): T {
  if (typeof value === 'string') return value.trim() as T;
  if (Array.isArray(value)) return value.map(trimStrings) as T;
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, trimStrings(v)])) as T;
  }
  return value;
}

/** NUL, or half of a surrogate pair: PostgreSQL stores neither in text or jsonb. */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
export const UNSTORABLE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE_TEXT.source, 'g');

/**
 * Text that comes from outside and is logged rather than validated (an endpoint's answer):
 * what storage cannot hold becomes U+FFFD, as undecodable bytes already do.
 */
export function storableText(s: string): string {
  return s.replace(UNSTORABLE_ALL, '\uFFFD');
}

const TAG = /<\/?[a-zA-Z!][^<>]*>/g;
const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
  '&nbsp;': ' ',
};
/** Rounds of decoding and tag removal; markup nested deeper is no title anyone writes. */
const MAX_ROUNDS = 4;

/**
 * Plain text for titles: tags removed, common entities decoded, whitespace collapsed.
 * Decoding and removal repeat, so markup written as entities (`&lt;script&gt;`) or split by
 * another tag (`<scr<b>ipt>`) goes too; past MAX_ROUNDS every `<` left goes, so the work stays
 * linear in the text. Then what is left of a tag its `>` never closed loses the `<` that would
 * open it, so a renderer that inlines the title cannot read `<img src=x onerror=…` as markup;
 * a `<` before a space or digit stays.
 */
export function stripHtml(s: string): string {
  let out = s;
  for (let round = 1; ; round++) {
    const prev = out;
    out = out.replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (m) => ENTITIES[m] ?? m).replace(TAG, '');
    if (out === prev) break;
    if (round === MAX_ROUNDS) {
      out = out.replace(/</g, '');
      break;
    }
  }
  // Each run of `<` whole, found without backtracking: `<<<<a` loses all four.
  const opens = (next: string | undefined) => next !== undefined && /[a-zA-Z!/?]/.test(next);
  return out
    .replace(/<+/g, (run, at: number, all: string) => (opens(all[at + run.length]) ? '' : run))
    .replace(/\s+/g, ' ')
    .trim();
}
