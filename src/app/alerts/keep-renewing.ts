/**
 * Renews a hold of `ms` while a send runs, however long SMTP takes: every quarter of its length
 * (at least every 5 s, at most every 250 ms), one renewal out at a time (a tick while one is out
 * is skipped, so a stalled database piles none up). A renewal that fails leaves the hold set
 * before it, three quarters of it still to run; the next tries again. A process that dies stops
 * renewing, and the hold runs out as set. The returned stop ends the renewals once the last is in.
 */
export function keepRenewing(renew: () => Promise<unknown>, ms: number): () => Promise<void> {
  let renewing: Promise<void> | null = null;
  const timer = setInterval(
    () => {
      if (renewing) return;
      renewing = renew()
        .then(
          () => {},
          () => {},
        )
        .finally(() => (renewing = null));
    },
    Math.max(250, Math.min(ms / 4, 5_000)),
  );
  timer.unref();
  return async () => {
    clearInterval(timer);
    await renewing;
  };
}
