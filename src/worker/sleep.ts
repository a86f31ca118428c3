/** Resolves after ms, or at once when the signal aborts or wake() is called. */
export function wakeableSleep(signal: AbortSignal) {
  let wakeUp: (() => void) | undefined;
  return {
    sleep(ms: number): Promise<void> {
      if (signal.aborted) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          wakeUp = undefined;
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal.addEventListener('abort', done, { once: true });
        wakeUp = done;
      });
    },
    wake(): void {
      wakeUp?.();
    },
  };
}
