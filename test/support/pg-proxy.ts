import net from 'node:net';

/** The server's answer to COMMIT: CommandComplete ('C', length 11) with the tag "COMMIT". */
const COMMITTED = Buffer.from('C\0\0\0\x0bCOMMIT\0', 'latin1');
/** COMMIT as the client writes it (a simple or a parsed query): its text, ending the string. */
const COMMIT_SENT = Buffer.from('commit\0', 'latin1');

/**
 * - `after-commit`: the server's answer is dropped once it has committed;
 * - `before-commit`: the COMMIT is dropped on its way to the server, which rolls back;
 * - `late-commit`: the client's side is cut as it writes COMMIT, which reaches the server only
 *   once the client has asked twice on other connections about the transaction
 *   (`pg_xact_status`): it commits, but after the client has been told it still runs;
 * - `stuck-commit`: as `late-commit`, but the COMMIT never reaches the server, whose backend
 *   holds the transaction open until it is ended.
 */
export type Cut = 'after-commit' | 'before-commit' | 'late-commit' | 'stuck-commit';

export interface PgProxy {
  /** The URL of the database behind `url`, reached through this proxy. */
  url: string;
  /**
   * Cuts the connection of the `nth` COMMIT from now (1: the next), as `how` says. With `down`,
   * every connection is closed at the cut and new ones are refused until `up()`, as when the
   * server has gone away. Resolves when the cut is made.
   */
  cut(how: Cut, nth?: number, opts?: { down?: boolean }): Promise<void>;
  up(): void;
  /** How many of the client's writes so far held `text`. */
  sent(text: string): number;
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of PostgreSQL that can lose a connection at a chosen COMMIT, as a network
 * failure or a server crash would: for tests of what the service does when a commit's outcome
 * is unknown.
 */
export async function pgProxy(databaseUrl: string): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<net.Socket>();
  let plan: { how: Cut; left: number; down: boolean; done(): void } | undefined;
  let down = false;
  /**
   * A COMMIT held back (late-commit), written to its server connection on the second status
   * question asked after it was held (`asked`: those asked before, by earlier cuts).
   */
  let held: { asked: number; release(): void } | undefined;
  const writes: string[] = [];
  const questions = () => writes.filter((w) => w.includes('pg_xact_status')).length;

  /**
   * Whether `pattern` ends in this chunk: it is looked for in the chunk behind the previous
   * chunk's tail, for a match split across reads, but not wholly inside that tail.
   */
  const seen = (tail: Buffer, chunk: Buffer, pattern: Buffer) =>
    Buffer.concat([tail, chunk]).includes(pattern, Math.max(0, tail.length - pattern.length + 1));
  const tailOf = (chunk: Buffer) => chunk.subarray(Math.max(0, chunk.length - 15));
  const due = (how: Cut) => plan?.how === how && --plan.left === 0;
  const finish = () => {
    const p = plan!;
    plan = undefined;
    if (p.down) {
      down = true;
      for (const s of sockets) s.destroy();
    }
    p.done();
  };

  const server = net.createServer((client) => {
    if (down) return void client.destroy();
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let keepUpstream = false;
    const cutNow = () => {
      client.destroy();
      upstream.destroy();
      finish();
    };
    let sentTail: Buffer = Buffer.alloc(0);
    let answerTail: Buffer = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      writes.push(chunk.toString('latin1'));
      if (held && questions() - held.asked >= 2) held.release();
      const commit = seen(sentTail, chunk, COMMIT_SENT);
      sentTail = tailOf(chunk);
      if (commit && due('before-commit')) return cutNow();
      const late = commit && due('late-commit');
      if (late || (commit && due('stuck-commit'))) {
        // The server keeps its side; a late COMMIT reaches it, and then the end of the connection.
        keepUpstream = true;
        client.destroy();
        if (late)
          held = {
            asked: questions(),
            release: () => {
              held = undefined;
              upstream.end(chunk);
            },
          };
        return finish();
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      const committed = seen(answerTail, chunk, COMMITTED);
      answerTail = tailOf(chunk);
      if (committed && due('after-commit')) return cutNow();
      if (!client.destroyed) client.write(chunk);
    });
    client.on('close', () => {
      sockets.delete(client);
      if (!keepUpstream) upstream.destroy();
    });
    upstream.on('close', () => (sockets.delete(upstream), client.destroy()));
    client.on('error', () => {});
    upstream.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(databaseUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as net.AddressInfo).port);
  return {
    url: proxied.toString(),
    cut: (how, nth = 1, opts = {}) => new Promise<void>((done) => (plan = { how, left: nth, down: !!opts.down, done })),
    up: () => void (down = false),
    sent: (text) => writes.filter((w) => w.includes(text)).length,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
