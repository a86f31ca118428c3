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
// What is left of a tag its `>` never closed: the `<` that would open it goes, so a renderer that
// inlines the title cannot read `<img src=x onerror=…` as markup. A `<` before a space or digit stays.
const OPENER = /<(?=[a-zA-Z!/?])/g;
const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
  '&nbsp;': ' ',
};

/**
 * Plain text for titles: tags removed, common entities decoded, whitespace collapsed.
 * Decoding happens inside the loop so markup written as entities (`&lt;script&gt;`) is removed too;
 * every step shortens the text, so the loop ends.
 */
export function stripHtml(s: string): string {
  let prev: string;
  let out = s;
  do {
    prev = out;
    out = out.replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (m) => ENTITIES[m] ?? m).replace(TAG, '');
    // Only once no whole tag is left: `<scr<b>ipt>` is one tag, `<script>`, after its inner goes.
    if (out === prev) out = out.replace(OPENER, '');
  } while (out !== prev);
  return out.replace(/\s+/g, ' ').trim();
}
