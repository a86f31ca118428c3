import pg from 'pg';

/** The channel migration 011 notifies on when deliveries are queued. */
export const NEW_DELIVERIES = 'canvass_new_deliveries';
/** The channel a worker announces itself on once its session listens, so the others count again. */
export const WORKERS_CHANGED = 'canvass_workers_changed';

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
  opts: {
    retryMs?: number;
    onError?: (err: unknown) => void;
    /**
     * The session's application name, and a call for each worker that announces itself
     * (worker-census.ts): given both, the session is this worker's presence, named so whatever
     * the URL says, and announced on WORKERS_CHANGED each time it (re)connects.
     */
    presence?: { applicationName: string; onWorkersChanged(): void };
    /** How long connecting may take before it is retried (CANVASS_DB_CONNECT_TIMEOUT_MS). */
    connectTimeoutMs?: number;
  } = {},
): DueListener {
  const retryMs = opts.retryMs ?? 1_000;
  const presence = opts.presence;
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
    const c = (client = new pg.Client({ connectionString: url, connectionTimeoutMillis: opts.connectTimeoutMs ?? 0 }));
    c.on('notification', (n) => (n.channel === WORKERS_CHANGED ? presence?.onWorkersChanged() : onDue()));
    c.on('error', fail);
    c.on('end', () => {
      if (!closed && client === c) fail(new Error('the notification connection ended'));
    });
    c.connect()
      .then(async () => {
        // Named with SET rather than at connect: an application_name in the URL would win there.
        // Named before the announcement, which makes every worker count, this one included.
        if (presence) await c.query(`SELECT set_config('application_name', $1, false)`, [presence.applicationName]);
        await c.query(
          presence
            ? `LISTEN ${NEW_DELIVERIES}; LISTEN ${WORKERS_CHANGED}; NOTIFY ${WORKERS_CHANGED}`
            : `LISTEN ${NEW_DELIVERIES}`,
        );
      })
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
