import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { hostKey } from '../../src/worker/account-share.js';
import { leftOutWarner } from '../../src/worker/warn-left-out.js';

describe('leftOutWarner', () => {
  const capture = () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    return { lines, warn: leftOutWarner(logger, 512, () => 480) };
  };

  it('names a host by its origin and account, never its path or query, even for a URL stored as written', () => {
    const { lines, warn } = capture();
    warn({
      accounts: [],
      hosts: [
        hostKey('acc_1', 'https://h.example:8443/hook/secret-token'),
        hostKey('acc_2', 'https://legacy.example?token=x'),
      ],
    });
    expect(lines.map((l) => l.hosts)).toEqual([
      [
        { accountId: 'acc_1', origin: 'https://h.example:8443' },
        { accountId: 'acc_2', origin: 'https://legacy.example' },
      ],
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/secret-token|token=x/);
  });

  it('warns of each account or host at most once a minute', () => {
    const { lines, warn } = capture();
    const host = hostKey('acc_1', 'https://h.example/x');
    warn({ accounts: ['acc_2'], hosts: [host] });
    warn({ accounts: ['acc_2'], hosts: [host] });
    warn({ accounts: ['acc_3'], hosts: [host] });
    expect(lines.map((l) => [l.accountIds, l.hosts])).toEqual([
      [['acc_2'], [{ accountId: 'acc_1', origin: 'https://h.example' }]],
      [['acc_3'], []],
    ]);
  });
});
