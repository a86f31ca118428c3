export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = Record<string, unknown>;

/** How deeply a free-form value (metadata, an answer) may nest: checked on the way in, walked as deep on the way out. */
export const MAX_NESTING = 32;

export const isPlainObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Objects merge key by key, arrays and scalars replace; `undefined` never overrides. */
export function deepMerge<T extends Obj>(base: T, ...layers: (Obj | undefined)[]): T {
  let out: Obj = { ...base };
  for (const layer of layers) {
    if (!layer) continue;
    const next: Obj = { ...out };
    for (const [k, v] of Object.entries(layer)) {
      if (v === undefined) continue;
      const cur = next[k];
      next[k] = isPlainObject(cur) && isPlainObject(v) ? deepMerge(cur, v) : v;
    }
    out = next;
  }
  return out as T;
}
