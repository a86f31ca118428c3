import { domainToASCII, domainToUnicode } from 'node:url';

/**
 * Email addresses as the payload's `email`/`emails` and `GET /emails` find them, and as an
 * email-capture answer must be one: a local part of RFC 5322 atext and dots, `@`, a domain of two
 * or more labels. Internationalised addresses (RFC 6531) count whole: letters, marks and digits of
 * any script belong to the local part and to the labels, so `jörg@exämple.de` is one address,
 * never `rg@…` cut out of it. In running text, letters of scripts written without spaces between
 * words (Chinese, Japanese, Korean particles, Thai, ...) border an address instead:
 * `请发邮件到ann@example.com谢谢` holds `ann@example.com`. An address with a part in such a
 * script is found when it is a whole value (an email-capture answer, a metadata field); inside a
 * sentence, none is (never a shorter one cut out of it). A part mixing such a script with ASCII
 * letters or digits (`请发邮件到ann`) makes no address.
 */

/** The ASCII characters of an address's local part (RFC 5322 atext, and the dot). */
const LOCAL = "A-Za-z0-9.!#$%&'*+/=?^_`{|}~\\-";
const IS_LOCAL = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.!#$%&'*+/=?^_`{|}~-")
  IS_LOCAL[c.charCodeAt(0)] = 1;
/** A letter, mark or digit of any script. */
const WORD = '\\p{L}\\p{M}\\p{N}';
/**
 * Scripts written without spaces between words, by Script_Extensions: the marks and signs they
 * share with others (the prolonged sound mark ー, the voiced sound marks) count as theirs.
 */
const UNSPACED = ['Han', 'Hiragana', 'Katakana', 'Hangul', 'Thai', 'Lao', 'Khmer', 'Myanmar', 'Tibetan']
  .map((s) => `\\p{scx=${s}}`)
  .join('');
/**
 * A letter, mark or digit beyond ASCII that belongs to an address in running text (not a
 * variation selector, which follows an ideograph). Never an ASCII one, which the alternatives
 * beside it match: two ways to match one character would make a failing match backtrack
 * exponentially.
 */
const IN_TEXT = `(?![\\0-\\x7f${UNSPACED}\\p{Variation_Selector}])[${WORD}]`;

const label = (c: string, inner: string) => `${c}(?:${inner}{0,61}${c})?`;
const address = (local: string, c: string, inner: string) => `${local}+@${label(c, inner)}(?:\\.${label(c, inner)})+`;
/** An address as a whole value: any script. */
const WHOLE = new RegExp(`^${address(`[${LOCAL}${WORD}]`, `[A-Za-z0-9${WORD}]`, `[A-Za-z0-9${WORD}-]`)}$`, 'u');
/** An address in running text; sticky: tried at one place. */
const ADDRESS_AT = new RegExp(
  address(`(?:[${LOCAL}]|${IN_TEXT})`, `(?:[A-Za-z0-9]|${IN_TEXT})`, `(?:[A-Za-z0-9-]|${IN_TEXT})`),
  'uy',
);
const IS_IN_TEXT = new RegExp(`^${IN_TEXT}$`, 'u');

/** The longest address kept (RFC 5321's path of 256 characters, less its angle brackets). */
export const MAX_ADDRESS_LENGTH = 254;

const UNSPACED_CHAR = new RegExp(`[${UNSPACED}]`, 'u');
/**
 * Whether each part (the local part, each label) keeps to one side: a script written without
 * spaces, or ASCII and the others. `李@例子.公司` does; `请发邮件到ann@example.com谢谢` is a
 * sentence around an address, not one.
 */
const unmixed = (value: string): boolean =>
  !UNSPACED_CHAR.test(value) || value.split(/[@.]/).every((p) => !(UNSPACED_CHAR.test(p) && /[A-Za-z0-9]/.test(p)));

/** Whether `value` is one address, nothing around it. */
export const isAddress = (value: string): boolean =>
  value.length <= MAX_ADDRESS_LENGTH &&
  WHOLE.test(value) &&
  unmixed(value) &&
  value.toLowerCase().length <= MAX_ADDRESS_LENGTH; // as it is kept: İ lower-cases to two units

/** The length of the local-part character that ends just before `i` (a surrogate pair counts two), or 0. */
function localCharBefore(text: string, i: number, from: number): number {
  const c = text.charCodeAt(i - 1);
  if (c < 128) return IS_LOCAL[c]!;
  if (c >= 0xdc00 && c <= 0xdfff && i - 2 >= from) {
    const h = text.charCodeAt(i - 2);
    if (h >= 0xd800 && h <= 0xdbff) return IS_IN_TEXT.test(text.slice(i - 2, i)) ? 2 : 0;
  }
  return IS_IN_TEXT.test(text[i - 1]!) ? 1 : 0;
}

/**
 * The addresses in `text`, lower-cased: the whole of it if it is one address, else those a global
 * search for the running-text pattern would find (less those longer than MAX_ADDRESS_LENGTH and
 * those whose domain goes on in a script written without spaces), in time linear in the text's
 * length: the pattern is tried only at the start of the run of local-part characters before each
 * `@`. Searched from every position instead, a long run with no address in it costs the square of
 * its length: about 20 s for 150,000 characters. Returns false once `take` says to stop.
 */
export function addressesIn(text: string, take: (address: string) => boolean): boolean {
  if (isAddress(text)) return take(text.toLowerCase());
  let from = 0;
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', Math.max(at + 1, from))) {
    let start = at;
    for (let n; start > from && (n = localCharBefore(text, start, from));) start -= n;
    if (start === at) continue;
    ADDRESS_AT.lastIndex = start;
    const m = ADDRESS_AT.exec(text);
    if (!m) continue;
    from = ADDRESS_AT.lastIndex;
    // A domain going on in a script written without spaces (`ann@example.com.中国`) is not cut
    // short into another address: none is taken.
    if (text[from] === '.' && UNSPACED_CHAR.test(String.fromCodePoint(text.codePointAt(from + 1) ?? 0))) continue;
    const address = m[0].toLowerCase();
    if (address.length <= MAX_ADDRESS_LENGTH && !take(address)) return false;
  }
  return true;
}

/** A local part that neither starts nor ends with a dot, nor holds two in a row (RFC 5322 dot-atom). */
const DOT_ATOM_LOCAL = /^(?!\.)(?![^@]*\.\.)[^@]*[^.@]@/;
/** A name at a host without dots (`owner@localhost`, `ops@intranet`): a domain of one label. */
const DOTLESS = new RegExp(`^[${LOCAL}${WORD}]+@${label(`[A-Za-z0-9${WORD}]`, `[A-Za-z0-9${WORD}-]`)}$`, 'u');

/**
 * A member's or alert recipient's address, as the API, the CLI and the dashboard take it: one
 * the payloads would find (internationalised ones included), or a name at a host without dots,
 * as operators name their own machines. Anything else is refused, so that a typo cannot become a
 * member whom failure alerts never reach.
 */
export const isMemberAddress = (value: string): boolean =>
  value.length <= MAX_ADDRESS_LENGTH &&
  DOT_ATOM_LOCAL.test(value) &&
  (isAddress(value) || (DOTLESS.test(value) && unmixed(value)));

/**
 * The forms an address may be stored or asked for under, lower case, each once: as given, then
 * with its domain in ASCII (punycode), then in Unicode. `ann@exämple.de` and
 * `ann@xn--exmple-cua.de` name one member.
 */
export function addressForms(address: string): string[] {
  const lower = address.toLowerCase();
  const at = lower.lastIndexOf('@');
  if (at < 0) return [lower];
  const [local, domain] = [lower.slice(0, at), lower.slice(at + 1)];
  const forms = [lower, `${local}@${asciiDomain(domain)}`, `${local}@${unicodeDomain(domain)}`];
  return [...new Set(forms)];
}

/**
 * A domain in ASCII (punycode). The converter reads a domain of digits as an IPv4 address (`1234`
 * as `0.0.4.210`, `127.1` as `127.0.0.1`, and so full-width `１２３４` too), which would make one
 * member of two addresses: only a domain with characters beyond ASCII is converted, and one that
 * comes out as an IPv4 address is kept as written.
 */
function asciiDomain(domain: string): string {
  if (!/[\u0080-\u{10ffff}]/u.test(domain)) return domain;
  const ascii = domainToASCII(domain);
  return ascii && !/^\d+\.\d+\.\d+\.\d+$/.test(ascii) ? ascii : domain;
}
/** A domain in Unicode, converted only when a label of it is punycode (`xn--`), for the same reason. */
const unicodeDomain = (domain: string): string =>
  /(?:^|\.)xn--/i.test(domain) ? domainToUnicode(domain) || domain : domain;

/**
 * An address as a mail server may echo it, and a member's mailbox key (`users.mailbox`): lower
 * case, the domain in ASCII (punycode).
 */
export function comparableAddress(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? address : `${address.slice(0, at)}@${asciiDomain(address.slice(at + 1))}`.toLowerCase();
}
