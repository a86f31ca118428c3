import pg from 'pg';

/** The channel migration 011 notifies on when deliveries are queued. */
export const NEW_DELIVERIES = 'canvass_new_deliveries';

export type DueListener = { close(): Promise<void> };

/**
 * LISTENs on PostgreSQL for deliveries queued by other processes (API servers, other workers'
 * schedulers) and calls `onDue` for each notification. The listener is only a shortcut: a worker
 * still polls, so a notification lost while the connection is down delays deliveries by one poll
 * at most. A dropped connection is opened again after `retryMs`, and `onDue` is called then for
 * whatever was queued meanwhile. `onError` hears each failure once per outage.
 */
export function listenForDue(
  url: string,
  onDue: () => void,
  opts: { retryMs?: number; onError?: (err: unknown) => void } = {},
): DueListener {
  const retryMs = opts.retryMs ?? 1_000;
  let closed = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  let failing = false;

  const fail = (err: unknown) => {
    if (!failing) opts.onError?.(err);
    failing = true;
    client?.removeAllListeners();
    client?.on('error', () => {});
    void client?.end().catch(() => {});
    client = undefined;
    if (!closed) timer = setTimeout(connect, retryMs);
  };

  const connect = () => {
    if (closed) return;
    const c = (client = new pg.Client({ connectionString: url }));
    c.on('notification', () => onDue());
    c.on('error', fail);
    c.on('end', () => {
      if (!closed && client === c) fail(new Error('the notification connection ended'));
    });
    c.connect()
      .then(() => c.query(`LISTEN ${NEW_DELIVERIES}`))
      .then(() => {
        if (failing) onDue();
        failing = false;
      })
      .catch((err: unknown) => {
        if (client === c) fail(err);
      });
  };

  connect();
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
