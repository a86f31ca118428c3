// A deadline on a call to the API that moves on whenever the answer makes progress, and the
// read of an answer's body that moves it: a long export that keeps arriving is not cut off,
// while an answer that stops arriving ends in an error rather than a page left waiting.

export type Deadline = {
  /** Aborted once `seconds` pass without a call to `progress`. */
  signal: AbortSignal;
  /** The answer moved on: the deadline starts again from now. */
  progress(): void;
  /** The call is over: the deadline will not fire. */
  clear(): void;
};

export function deadline(seconds: number): Deadline {
  const controller = new AbortController();
  let timer = setTimeout(() => controller.abort(), seconds * 1_000);
  return {
    signal: controller.signal,
    progress() {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(), seconds * 1_000);
    },
    clear: () => clearTimeout(timer),
  };
}

/**
 * Reads a body to its end, calling `progress` with each chunk that arrives. The read fails when
 * the stream does (a fetch aborted by its deadline fails its body's stream).
 */
export async function readChunks<C extends Uint8Array>(
  body: ReadableStream<C> | null,
  progress: (chunk: C) => void,
): Promise<C[]> {
  const chunks: C[] = [];
  if (!body) return chunks;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(value);
    progress(value);
  }
}
