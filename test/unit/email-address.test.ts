import { describe, expect, it } from 'vitest';
import { addressForms, comparableAddress, isMemberAddress } from '../../src/domain/email-address.js';

describe('isMemberAddress', () => {
  it('takes what the payloads find, internationalised addresses included', () => {
    for (const ok of [
      'ann@example.com',
      'jörg@exämple.de',
      '李@例子.公司',
      'ann+tag@mail.example.co.uk',
      'ann@xn--exmple-cua.de',
    ])
      expect(isMemberAddress(ok), ok).toBe(true);
  });

  it('takes a name at a host without dots, as operators name their own machines', () => {
    for (const ok of ['owner@localhost', 'ops@intranet', 'jörg@intranet']) expect(isMemberAddress(ok), ok).toBe(true);
  });

  it('refuses what is no address', () => {
    for (const bad of [
      '',
      'bob',
      '@example.com',
      'ann@',
      'e@@example.com',
      'ann @example.com',
      'ann@exa mple.com',
      'ann@-example.com',
      'ann@example-',
      '"ann"@example.com',
      'ann\u0001@localhost',
      '<ann>@localhost',
      '.ann@example.com',
      'ann.@example.com',
      'a..b@example.com',
      'ann.@localhost',
      ' ann@example.com',
      `${'a'.repeat(250)}@localhost`,
    ])
      expect(isMemberAddress(bad), JSON.stringify(bad)).toBe(false);
  });
});

describe('addressForms', () => {
  it('names an address with its domain in ASCII and in Unicode, lower case, each once', () => {
    expect(addressForms('Ann@Exämple.DE')).toEqual(['ann@exämple.de', 'ann@xn--exmple-cua.de']);
    expect(addressForms('ann@xn--exmple-cua.de')).toEqual(['ann@xn--exmple-cua.de', 'ann@exämple.de']);
    expect(addressForms('Ann@Example.com')).toEqual(['ann@example.com']);
    expect(addressForms('owner@localhost')).toEqual(['owner@localhost']);
  });

  it('leaves a domain of digits as written, never read as an IPv4 address', () => {
    // `ops@1234` and `ops@0.0.4.210` are two members; so are `a@127.1` and `a@127.0.0.1`.
    for (const address of ['ops@1234', 'a@127.1', 'a@0x7f.1', 'ops@１２３４', 'a@１２７.１']) {
      expect(isMemberAddress(address), address).toBe(true);
      expect(addressForms(address)).toEqual([address]);
      expect(comparableAddress(address)).toBe(address);
    }
    expect(comparableAddress('Jörg@Exämple.DE')).toBe('jörg@xn--exmple-cua.de');
  });
});
