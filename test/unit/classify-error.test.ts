import { describe, expect, it } from 'vitest';
import { classifyError, ClosedError, DeadlineError } from '../../src/infra/http-sender/classify-error.js';

const coded = (code: string) => Object.assign(new Error(`getaddrinfo ${code} hooks.example.com`), { code });

describe('classifyError', () => {
  it('names every way a name fails to resolve dns, so the delivery takes the DNS ladder', () => {
    for (const code of ['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA', 'EAI_ADDRFAMILY'])
      expect(classifyError(coded(code), false), code).toBe('dns');
  });

  it('reads the code through causes, and a deadline passed before anything else', () => {
    expect(classifyError(new Error('wrapped', { cause: coded('EAI_FAIL') }), false)).toBe('dns');
    expect(classifyError(coded('ENOTFOUND'), true)).toBe('timeout');
    expect(classifyError(new DeadlineError(), false)).toBe('timeout');
  });

  it('tells refusals, resets, TLS failures and blocked addresses apart, and the rest is network', () => {
    expect(classifyError(coded('ECONNREFUSED'), false)).toBe('refused');
    expect(classifyError(new ClosedError(), false)).toBe('reset');
    expect(classifyError(coded('EPIPE'), false)).toBe('reset');
    expect(classifyError(coded('ERR_TLS_CERT_ALTNAME_INVALID'), false)).toBe('tls');
    expect(classifyError(coded('CANVASS_BLOCKED_ADDRESS'), false)).toBe('blocked_address');
    expect(classifyError(coded('EHOSTUNREACH'), false)).toBe('network');
  });
});
