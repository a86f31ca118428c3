import { describe, expect, it } from 'vitest';
import { idsMadeBefore, newId, newRandomId } from '../../src/domain/ids.js';

describe('idsMadeBefore', () => {
  it('sorts above every id made earlier and at or below every id made at that time or later', () => {
    const t = Date.UTC(2026, 10, 21, 12, 0, 0, 0);
    const bound = idsMadeBefore('dlv', t);
    for (const ms of [0, t - 86_400_000, t - 62, t - 1]) {
      for (let i = 0; i < 50; i++) expect(newId('dlv', ms) < bound).toBe(true);
    }
    for (const ms of [t, t + 1, t + 62, t + 86_400_000 * 365]) {
      for (let i = 0; i < 50; i++) expect(newId('dlv', ms) < bound).toBe(false);
    }
  });
});

describe('newId', () => {
  it('sorts the ids made in one millisecond in the order they were made, and keeps them unique', () => {
    const t = Date.UTC(2026, 10, 24, 12, 0, 0, 0);
    const made = Array.from({ length: 5_000 }, (_, i) => newId(i % 2 ? 'rsp' : 'dlv', t).slice(4));
    expect([...made].sort()).toEqual(made);
    expect(new Set(made).size).toBe(made.length);
  });

  it('starts each millisecond at random', () => {
    const tails = new Set(Array.from({ length: 200 }, (_, i) => newId('rsp', 1_000_000 + i).slice(-14)));
    expect(tails.size).toBe(200);
  });
});

describe('newRandomId', () => {
  it('sorts by its millisecond, and ids made in one millisecond share nothing of their random part', () => {
    const t = Date.UTC(2026, 11, 6, 12, 0, 0, 0);
    const made = Array.from({ length: 2_000 }, () => newRandomId('prt', t));
    expect(new Set(made).size).toBe(made.length);
    expect(made.every((id) => id.startsWith(idsMadeBefore('prt', t)) && id.length === newId('prt', t).length)).toBe(
      true,
    );
    expect(newRandomId('prt', t - 1) < idsMadeBefore('prt', t)).toBe(true);
    // Counted ids made one after another share all but their last characters; these share no
    // more than chance gives (a common start of 6 random base62 characters in any of the 1,999
    // pairs: about 1 in 28 million).
    const tails = made.map((id) => id.slice(-14));
    const common = (a: string, b: string) => [...a].findIndex((c, i) => c !== b[i]);
    const longest = Math.max(...tails.slice(1).map((tail, i) => common(tail, tails[i]!)));
    expect(longest).toBeLessThan(6);
  });
});
