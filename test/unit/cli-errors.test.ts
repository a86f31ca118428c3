import { describe, expect, it } from 'vitest';
import { describeError } from '../../src/cli/output.js';

describe('describeError: what a failed command prints', () => {
  it('is the message when there is one', () => {
    expect(describeError(new Error('the data directory is in use'))).toBe('the data directory is in use');
    expect(describeError('plain text')).toBe('plain text');
  });

  it('says what an error without a message holds: a refusal on every address of a name', () => {
    const refused = (address: string) =>
      Object.assign(new Error(`connect ECONNREFUSED ${address}:5432`), { code: 'ECONNREFUSED' });
    const both = new AggregateError([refused('::1'), refused('127.0.0.1')]);
    expect(both.message).toBe('');
    expect(describeError(both)).toBe('connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432');
    expect(describeError(Object.assign(new Error(''), { code: 'ECONNRESET' }))).toBe('ECONNRESET');
    expect(describeError(new TypeError())).toBe('TypeError');
  });
});
