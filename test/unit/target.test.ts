import { describe, expect, it } from 'vitest';
import { parseTarget } from '../../src/infra/http-sender/target.js';

/** Where an attempt goes (docs/receiving-webhooks.md): the origin its connections are kept under, and what it sends. */
describe('parseTarget', () => {
  it('sends a name written with its trailing dot as the same host, and keeps it under the same origin', () => {
    const dotted = parseTarget('https://Hooks.Example.com./in?x=1');
    const plain = parseTarget('https://hooks.example.com/in?x=1');
    expect({ ...dotted, host: plain.host }).toEqual(plain);
    expect(dotted).toMatchObject({
      origin: 'https://hooks.example.com',
      // Looked up as written: a fully qualified name, no search list.
      host: 'hooks.example.com.',
      hostHeader: 'hooks.example.com',
      port: 443,
      path: '/in?x=1',
    });
    expect(parseTarget('https://hooks.example.com.:8443/a')).toMatchObject({
      origin: 'https://hooks.example.com:8443',
      hostHeader: 'hooks.example.com:8443',
      port: 8443,
    });
  });

  it('keeps an IPv6 literal in brackets in the Host header and origin, bare for the connection', () => {
    expect(parseTarget('https://[2001:db8::1]:8443/a')).toMatchObject({
      origin: 'https://[2001:db8::1]:8443',
      host: '2001:db8::1',
      hostHeader: '[2001:db8::1]:8443',
      blockedLiteral: true,
    });
    expect(parseTarget('https://[2606:4700::1111]/')).toMatchObject({
      origin: 'https://[2606:4700::1111]',
      hostHeader: '[2606:4700::1111]',
      blockedLiteral: false,
    });
  });
});
