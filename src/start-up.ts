/**
 * Runs a process's start-up steps; when one fails, what the earlier ones opened is closed, last
 * first, so a failed start leaves no worker claiming and lets go of the data directory.
 */
export async function starting<T>(
  rt: { close(): Promise<void> },
  steps: (opened: (close: () => Promise<unknown>) => void) => Promise<T>,
) {
  const closes: (() => Promise<unknown>)[] = [() => rt.close()];
  try {
    return await steps((close) => closes.push(close));
  } catch (e) {
    for (const close of closes.reverse()) await close().catch(() => {});
    throw e;
  }
}

/** Binds a port, or says which variables chose the address that could not be bound. */
export async function listening<T>(variables: string, address: string, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (e) {
    throw new Error(`cannot listen on ${address} (${variables}): ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
    });
  }
}
