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

const TAG = /<\/?[a-zA-Z!][^<>]*>/g;
const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&nbsp;': ' ' };

/**
 * Plain text for titles: tags removed, common entities decoded, whitespace collapsed.
 * Decoding happens inside the loop so markup written as entities (`&lt;script&gt;`) is removed too.
 */
export function stripHtml(s: string): string {
  let prev: string;
  let out = s;
  do {
    prev = out;
    out = out.replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (m) => ENTITIES[m] ?? m).replace(TAG, '');
  } while (out !== prev);
  return out.replace(/\s+/g, ' ').trim();
}
