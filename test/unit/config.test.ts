import { describe, expect, it } from 'vitest';
import { checkServePorts, loadConfig, metricsOpenBeyondLoopback } from '../../src/config/index.js';

describe('CANVASS_ENDPOINT_CONNECTIONS: connections to one endpoint origin from all workers together', () => {
  it('is 32 unless set, and takes a whole number from 1 to 1,024', () => {
    expect(loadConfig({}).endpointConnections).toBe(32);
    expect(loadConfig({ CANVASS_ENDPOINT_CONNECTIONS: ' 8 ' }).endpointConnections).toBe(8);
    expect(loadConfig({ CANVASS_ENDPOINT_CONNECTIONS: '1024' }).endpointConnections).toBe(1024);
  });

  it('refuses none, too many, and what is not a whole number, naming the variable', () => {
    for (const bad of ['0', '1025', 'many', '-4', '2.5'])
      expect(() => loadConfig({ CANVASS_ENDPOINT_CONNECTIONS: bad })).toThrow(
        expect.objectContaining({ name: 'ConfigError', variable: 'CANVASS_ENDPOINT_CONNECTIONS' }) as Error,
      );
  });
});

describe('values that would fail only later are refused at start, naming the variable', () => {
  const refuses = (env: Record<string, string>, variable: string) =>
    expect(() => loadConfig(env)).toThrow(expect.objectContaining({ name: 'ConfigError', variable }) as Error);

  it('a ladder delay past a year, which no due time could hold', () => {
    refuses({ CANVASS_RETRY_LADDER_MS: '99999999999999999999,1,1,1,1' }, 'CANVASS_RETRY_LADDER_MS');
    refuses({ CANVASS_DNS_RETRY_LADDER_MS: '1,31536000001' }, 'CANVASS_DNS_RETRY_LADDER_MS');
    expect(loadConfig({ CANVASS_DNS_RETRY_LADDER_MS: '1,31536000000' }).dnsRetryLadderMs).toEqual([1, 31_536_000_000]);
  });

  it('a retention shorter than the week alert emails count lost responses over', () => {
    refuses({ CANVASS_RETENTION_MS: '86400000' }, 'CANVASS_RETENTION_MS');
    refuses({ CANVASS_RETENTION_MS: '604799999' }, 'CANVASS_RETENTION_MS');
    expect(loadConfig({ CANVASS_RETENTION_MS: '604800000' }).retentionMs).toBe(604_800_000);
    expect(loadConfig({}).retentionMs).toBe(30 * 86_400_000);
  });

  it('a metrics token that is blank or has a space in it (no bearer header can carry it)', () => {
    refuses({ CANVASS_METRICS_TOKEN: '   ' }, 'CANVASS_METRICS_TOKEN');
    refuses({ CANVASS_METRICS_TOKEN: 'two words' }, 'CANVASS_METRICS_TOKEN');
    expect(loadConfig({ CANVASS_METRICS_TOKEN: ' s3cret-scrape-token ' }).metricsToken).toBe('s3cret-scrape-token');
    // Scrapes are not rate-limited: a short token could be guessed.
    refuses({ CANVASS_METRICS_TOKEN: 's3cret' }, 'CANVASS_METRICS_TOKEN');
    expect(() => loadConfig({ CANVASS_METRICS_TOKEN: 'x'.repeat(15) })).toThrow(/at least 16 characters/);
    expect(loadConfig({ CANVASS_METRICS_TOKEN: 'x'.repeat(16) }).metricsToken).toBe('x'.repeat(16));
    expect(loadConfig({}).metricsToken).toBeUndefined();
  });

  it("a metrics port that is the API's own, for a process that serves the API (a worker has no API port)", () => {
    const same = loadConfig({ PORT: '4000', CANVASS_METRICS_PORT: '4000' });
    expect(same.metricsPort).toBe(4000);
    expect(() => checkServePorts(same)).toThrow(
      expect.objectContaining({ name: 'ConfigError', variable: 'CANVASS_METRICS_PORT' }) as Error,
    );
    checkServePorts(loadConfig({ PORT: '0', CANVASS_METRICS_PORT: '0' }));
    checkServePorts(loadConfig({ PORT: '4000', CANVASS_METRICS_PORT: '4001' }));
  });

  it('a metrics port of spaces, as for every whole number (empty counts as unset)', () => {
    refuses({ CANVASS_METRICS_PORT: '  ' }, 'CANVASS_METRICS_PORT');
    refuses({ PORT: '  ' }, 'PORT');
    expect(loadConfig({ CANVASS_METRICS_PORT: '' }).metricsPort).toBeUndefined();
    expect(loadConfig({ CANVASS_METRICS_PORT: ' 9100 ' }).metricsPort).toBe(9100);
  });

  it('a DATABASE_URL set but blank (an empty secret), which would otherwise start embedded PGlite', () => {
    for (const blank of ['', '   ', '\n']) {
      refuses({ DATABASE_URL: blank }, 'DATABASE_URL');
      expect(() => loadConfig({ DATABASE_URL: blank })).toThrow(/^DATABASE_URL: is set but blank/);
    }
    expect(loadConfig({}).databaseUrl).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: undefined }).databaseUrl).toBeUndefined();
  });

  it('a DATABASE_URL or SMTP_URL naming no host (the client would fall back to localhost unseen)', () => {
    refuses({ DATABASE_URL: 'postgres://' }, 'DATABASE_URL');
    refuses({ DATABASE_URL: 'postgresql:///canvass' }, 'DATABASE_URL');
    refuses({ SMTP_URL: 'smtp://' }, 'SMTP_URL');
    refuses({ SMTP_URL: 'smtp://?host=/tmp' }, 'SMTP_URL');
    // Credentials with no host: the socket form is named in the message.
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u:pw@/canvass?host=/var/run/postgresql' })).toThrow(
      /names no host \(for a Unix socket: postgres:\/\/\/db\?host=/,
    );
    // A socket directory is named by a host parameter; spaces around a value are not part of it.
    expect(loadConfig({ DATABASE_URL: 'postgres:///canvass?host=/var/run/postgresql' }).databaseUrl).toBe(
      'postgres:///canvass?host=/var/run/postgresql',
    );
    expect(loadConfig({ DATABASE_URL: ' postgres://db.internal/canvass ' }).databaseUrl).toBe(
      'postgres://db.internal/canvass',
    );
  });

  it('a HOST that is no address or name, and a CANVASS_MAIL_FROM with no address', () => {
    refuses({ HOST: 'bad host!!' }, 'HOST');
    for (const host of ['0.0.0.0', '::', 'localhost', 'fe80::1%eth0'])
      expect(loadConfig({ HOST: host }).host).toBe(host);
    // No address, an address left open, or two of them.
    for (const from of [
      'Canvass alerts',
      'Canvass <alerts@example.com',
      'a@example.com, b@example.com',
      'a@b c',
      'Ops, EU <ops@example.com>',
    ])
      refuses({ CANVASS_MAIL_FROM: from }, 'CANVASS_MAIL_FROM');
    for (const from of [
      'alerts@example.com',
      '"Ops, EU" <ops@example.com>',
      '"alerts@acme" <a@acme.example>',
      'J. Smith <j.smith@bücher.example>',
      '<ops@example.com>',
    ])
      expect(loadConfig({ CANVASS_MAIL_FROM: from }).mailFrom).toBe(from);
    // Empty, as a deployment template leaves them, counts as unset.
    expect(loadConfig({ HOST: '', LOG_LEVEL: ' ' })).toMatchObject({ host: '127.0.0.1', logLevel: 'info' });
    expect(loadConfig({ CANVASS_MAIL_FROM: 'Ops <ops@example.com>' }).mailFrom).toBe('Ops <ops@example.com>');
  });
});

describe('CANVASS_DATA_DIR: embedded storage, and the admin socket inside it', () => {
  const dir = (bytes: number) => `/${'d'.repeat(bytes - 1)}`;

  it('refuses a directory too long for the socket (107 bytes on Linux), naming the variable', () => {
    // "/canvass.sock" adds 13 bytes.
    expect(loadConfig({ CANVASS_DATA_DIR: dir(94) }).dataDir).toBe(dir(94));
    expect(() => loadConfig({ CANVASS_DATA_DIR: dir(95) })).toThrow(
      expect.objectContaining({ name: 'ConfigError', variable: 'CANVASS_DATA_DIR' }) as Error,
    );
  });

  it('takes any directory with PostgreSQL, which needs no socket', () => {
    const env = { CANVASS_DATA_DIR: dir(300), DATABASE_URL: 'postgres://127.0.0.1/canvass' };
    expect(loadConfig(env).dataDir).toBe(dir(300));
  });
});

describe('GET /metrics open beyond loopback (a warning at start)', () => {
  it('is so without a token on any address but a loopback one', () => {
    const open = (env: Record<string, string>) => metricsOpenBeyondLoopback(loadConfig(env));
    expect(open({})).toBe(false); // 127.0.0.1
    for (const host of ['localhost', '::1', '0:0:0:0:0:0:0:1', '127.0.0.53', '::ffff:127.0.0.1'])
      expect(open({ HOST: host }), host).toBe(false);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'api.example.com']) expect(open({ HOST: host }), host).toBe(true);
    expect(open({ HOST: '0.0.0.0', CANVASS_METRICS_TOKEN: 'secret-scrape-token' })).toBe(false);
  });
});
