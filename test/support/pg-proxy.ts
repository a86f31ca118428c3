import net from 'node:net';

/** The server's answer to COMMIT: CommandComplete ('C', length 11) with the tag "COMMIT". */
const COMMITTED = Buffer.from('C\0\0\0\x0bCOMMIT\0', 'latin1');
/** COMMIT as the client writes it (a simple or a parsed query): its text, ending the string. */
const COMMIT_SENT = Buffer.from('commit\0', 'latin1');

export type Cut = 'after-commit' | 'before-commit';

export interface PgProxy {
  /** The URL of the database behind `url`, reached through this proxy. */
  url: string;
  /**
   * Cuts the connection of the `nth` COMMIT from now (1: the next): `after-commit` drops the
   * server's answer once it has committed, `before-commit` drops the COMMIT on its way to the
   * server, which then rolls the transaction back. With `down`, every connection is closed at
   * the cut and new ones are refused until `up()`, as when the server has gone away. Resolves
   * when the cut is made.
   */
  cut(how: Cut, nth?: number, opts?: { down?: boolean }): Promise<void>;
  up(): void;
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
   * Whether `pattern` ends in this chunk: it is looked for in the chunk behind the previous
   * chunk's tail, for a match split across reads, but not wholly inside that tail.
   */
  const seen = (tail: Buffer, chunk: Buffer, pattern: Buffer) =>
    Buffer.concat([tail, chunk]).includes(pattern, Math.max(0, tail.length - pattern.length + 1));
  const tailOf = (chunk: Buffer) => chunk.subarray(Math.max(0, chunk.length - 15));
  const due = (how: Cut) => plan?.how === how && --plan.left === 0;

  const server = net.createServer((client) => {
    if (down) return void client.destroy();
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    const cutNow = () => {
      client.destroy();
      upstream.destroy();
      const p = plan!;
      plan = undefined;
      if (p.down) {
        down = true;
        for (const s of sockets) s.destroy();
      }
      p.done();
    };
    let sentTail: Buffer = Buffer.alloc(0);
    let answerTail: Buffer = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      const commit = seen(sentTail, chunk, COMMIT_SENT);
      sentTail = tailOf(chunk);
      if (commit && due('before-commit')) return cutNow();
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      const committed = seen(answerTail, chunk, COMMITTED);
      answerTail = tailOf(chunk);
      if (committed && due('after-commit')) return cutNow();
      client.write(chunk);
    });
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      a.on('close', () => (b.destroy(), sockets.delete(a)));
      a.on('error', () => {});
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(databaseUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as net.AddressInfo).port);
  return {
    url: proxied.toString(),
    cut: (how, nth = 1, opts = {}) => new Promise<void>((done) => (plan = { how, left: nth, down: !!opts.down, done })),
    up: () => void (down = false),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
