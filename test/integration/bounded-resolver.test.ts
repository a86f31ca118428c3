import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedResolver } from '../../src/infra/http-sender/bounded-resolver.js';
import { classifyError } from '../../src/infra/http-sender/classify-error.js';

/**
 * Endpoints' names resolved through c-ares against a real name server on loopback (UDP): one
 * that answers `*.ok.test` with 198.51.100.7, says `*.gone.test` does not exist, fails
 * `*.broken.test` (SERVFAIL), refuses `*.refused.test` (REFUSED), and never answers anything else.
 */

let server: dgram.Socket;
let address: string;
let asked = 0;

/** The name asked in a query, its end offset, and its type. */
function question(msg: Buffer): { name: string; end: number; type: number } {
  const labels: string[] = [];
  let i = 12;
  while (msg[i]! > 0) {
    labels.push(msg.subarray(i + 1, i + 1 + msg[i]!).toString('latin1'));
    i += msg[i]! + 1;
  }
  return { name: labels.join('.').toLowerCase(), end: i + 5, type: msg.readUInt16BE(i + 1) };
}

function answer(query: Buffer, rcode: number, a?: number[]): Buffer {
  const q = question(query);
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  header.writeUInt16BE(0x8180 | rcode, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(a ? 1 : 0, 6);
  const parts = [header, query.subarray(12, q.end)];
  if (a) {
    const rr = Buffer.alloc(16);
    rr.writeUInt16BE(0xc00c, 0);
    rr.writeUInt16BE(1, 2);
    rr.writeUInt16BE(1, 4);
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(4, 10);
    Buffer.from(a).copy(rr, 12);
    parts.push(rr);
  }
  return Buffer.concat(parts);
}

beforeAll(async () => {
  server = dgram.createSocket('udp4');
  server.on('message', (msg, from) => {
    asked++;
    const q = question(msg);
    const reply = (b: Buffer) => server.send(b, from.port, from.address);
    if (q.name.endsWith('.ok.test')) reply(q.type === 1 ? answer(msg, 0, [198, 51, 100, 7]) : answer(msg, 0));
    else if (q.name.endsWith('.gone.test')) reply(answer(msg, 3));
    else if (q.name.endsWith('.broken.test')) reply(answer(msg, 2));
    else if (q.name.endsWith('.refused.test')) reply(answer(msg, 5));
    // Anything else: never answered.
  });
  await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
  address = `127.0.0.1:${server.address().port}`;
});
afterAll(() => server?.close());

describe('the bounded resolver', () => {
  it("answers a name's addresses, and says a missing name is missing", async () => {
    const resolve = boundedResolver({ timeoutMs: 1_000, tries: 1, servers: [address] });
    expect(await resolve('hooks.ok.test', { family: 0 })).toEqual([{ address: '198.51.100.7', family: 4 }]);
    const missing = await resolve('hooks.gone.test').catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'ENOTFOUND', hostname: 'hooks.gone.test' });
    expect(classifyError(missing, false)).toBe('dns');
  });

  it('answers other names while many lookups wait on a server that never answers', async () => {
    const resolve = boundedResolver({ timeoutMs: 60_000, tries: 1, servers: [address] });
    const before = asked;
    // Many more than libuv's four pool threads, which getaddrinfo would each hold.
    const silent = Array.from({ length: 16 }, (_, i) =>
      resolve(`host${i}.silent.test`).then(
        () => 'resolved',
        (e: unknown) => e,
      ),
    );
    let settled = 0;
    for (const s of silent) void s.then(() => settled++);
    // Every silent lookup has gone out to the server (both families each).
    await expect.poll(() => asked - before, { timeout: 10_000 }).toBeGreaterThanOrEqual(32);
    expect(await resolve('other.ok.test')).toEqual([{ address: '198.51.100.7', family: 4 }]);
    expect(settled).toBe(0);
    resolve.cancel();
    for (const f of await Promise.all(silent)) expect(classifyError(f, false)).toBe('timeout');
  });

  it('gives up on a name whose server never answers after its tries, as a timeout (the main ladder)', async () => {
    const resolve = boundedResolver({ timeoutMs: 200, tries: 2, servers: [address] });
    const failed = await resolve('late.silent.test').catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 'ETIMEDOUT', hostname: 'late.silent.test' });
    expect(classifyError(failed, false)).toBe('timeout');
  });

  it('reads a server that fails the query (SERVFAIL) as a DNS failure', async () => {
    const resolve = boundedResolver({ timeoutMs: 1_000, tries: 1, servers: [address] });
    const failed = await resolve('hooks.broken.test').catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 'EAI_AGAIN' });
    expect(classifyError(failed, false)).toBe('dns');
  });

  it('reads its own name server refusing it, or not reachable, as the network, not the endpoint’s DNS', async () => {
    const resolve = boundedResolver({ timeoutMs: 1_000, tries: 1, servers: [address] });
    const refused = await resolve('hooks.refused.test').catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'ERESOLVER', hostname: 'hooks.refused.test' });
    expect(classifyError(refused, false)).toBe('network');
    // A port nobody listens on: the query is refused by the host (ICMP), c-ares's ECONNREFUSED.
    const closed = dgram.createSocket('udp4');
    await new Promise<void>((r) => closed.bind(0, '127.0.0.1', r));
    const port = closed.address().port;
    closed.close();
    const unreachable = boundedResolver({ timeoutMs: 1_000, tries: 1, servers: [`127.0.0.1:${port}`] });
    const down = await unreachable('hooks.ok.test').catch((e: unknown) => e);
    expect(down).toMatchObject({ code: 'ERESOLVER' });
    expect(classifyError(down, false)).toBe('network');
  });

  it('answers loopback for localhost names, whatever the DNS says', async () => {
    const resolve = boundedResolver({ timeoutMs: 300, tries: 1, servers: [address] });
    for (const name of ['localhost', 'LOCALHOST.', 'api.localhost'])
      expect((await resolve(name)).map((a) => a.address)).toEqual(['127.0.0.1', '::1']);
  });
});
