/** When each key was last warned about: a warn line names each key at most once a minute. */
export function onceAMinute() {
  const warnedAt = new Map<string, number>();
  return {
    due: (key: string, now: number): boolean => now - (warnedAt.get(key) ?? -Infinity) >= 60_000,
    /** Records `keys` as warned about at `now`, and forgets those a minute old. */
    warned(keys: readonly string[], now: number): void {
      for (const [key, at] of warnedAt) if (now - at >= 60_000) warnedAt.delete(key);
      for (const key of keys) warnedAt.set(key, now);
    },
  };
}
