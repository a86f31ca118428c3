import { DomainError } from './errors.js';
import { isIpLiteral, isPublicAddress } from './ip-ranges.js';

export type UrlPolicy = { allowPrivateTargets: boolean };

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const NON_PUBLIC_SUFFIXES = ['localhost', 'local', 'internal', 'home.arpa', 'localdomain'];

function refuse(path: string, raw: string, why: string): never {
  throw new DomainError('invalid_url', `${path} must be a public https:// URL: ${why}`, [
    { path, message: `${why} (${raw.slice(0, 200)})` },
  ]);
}

/**
 * Creation-time check of a webhook or logic URL. WHATWG parsing first normalises every IPv4
 * notation (decimal, octal, hex, short forms) and IPv6 form, so the range check sees one shape.
 * Names are checked again on the resolved address at delivery.
 */
export function checkEndpointUrl(raw: string, policy: UrlPolicy, path = '/url'): string {
  const url = checkedUrl(raw, policy, path);
  // Percent-encoding can lengthen a URL: the limit holds for the form that is stored.
  if (url.length > 2048) refuse(path, raw, 'longer than 2048 characters once percent-encoded');
  return url;
}

/**
 * The form a Trigger webhook action's URL takes for roles that see it masked (README, "API
 * overview"): its origin and this path.
 */
const MASKED_PATH = '/***';

/** A Trigger webhook URL as a role that may not manage webhooks sees it. */
export const maskedUrl = (url: string): string => loggableOrigin(url) + MASKED_PATH;

/**
 * A Trigger webhook action's URL: as a webhook's, and never the masked form itself. That form
 * stands for a stored action; saved as a destination it would send the poll's events to a path
 * the customer never named.
 */
export function checkLogicUrl(raw: string, policy: UrlPolicy, path = '/url'): string {
  const url = checkEndpointUrl(raw, policy, path);
  if (url === maskedUrl(url))
    refuse(
      path,
      raw,
      'this is the masked form of a stored action, which names no stored action here: send the full URL',
    );
  return url;
}

function checkedUrl(raw: string, policy: UrlPolicy, path: string): string {
  if (raw.length > 2048) refuse(path, raw, 'longer than 2048 characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    refuse(path, raw, 'not a valid URL');
  }
  if (url.protocol !== 'https:') refuse(path, raw, 'the scheme must be https');
  if (url.username || url.password) refuse(path, raw, 'credentials in the URL are not allowed');
  // Port 0 names no service: nothing can ever be connected to there.
  if (url.port === '0') refuse(path, raw, 'port 0 cannot be connected to');
  const host = url.hostname;
  if (host.startsWith('[') || isIpLiteral(host)) {
    if (!policy.allowPrivateTargets && !isPublicAddress(host)) refuse(path, raw, 'the address is not public');
    return url.toString();
  }
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  const labels = name.split('.');
  if (name.length > 253 || labels.some((l) => !LABEL.test(l))) refuse(path, raw, 'the host name is not valid');
  if (/^\d+$/.test(labels[labels.length - 1] ?? '')) refuse(path, raw, 'the host name is not valid');
  if (!policy.allowPrivateTargets) {
    if (labels.length < 2) refuse(path, raw, 'the host name is not a public name');
    if (NON_PUBLIC_SUFFIXES.some((s) => name === s || name.endsWith('.' + s)))
      refuse(path, raw, 'the host name is not public');
  }
  return url.toString();
}

/** What logs may show of an endpoint URL: scheme, host and port; a path or query can hold a token. */
export function loggableOrigin(raw: string): string {
  try {
    return new URL(raw).origin;
  } catch {
    return '(not a URL)';
  }
}
