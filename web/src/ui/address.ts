/**
 * An address as the API compares members' addresses: lower case, its domain in ASCII
 * (punycode), so that `jörg@exämple.de` and `JÖRG@xn--exmple-cua.de` name one member.
 */
export function comparableAddress(email: string): string {
  const lower = email.trim().toLowerCase();
  const at = lower.lastIndexOf('@');
  // Only a domain with letters beyond ASCII is converted, as on the server: the URL parser
  // reads a domain of digits as an IPv4 address.
  if (at < 0 || !/[\u0080-\u{10ffff}]/u.test(lower.slice(at + 1))) return lower;
  try {
    // The URL parser turns a host into its ASCII form, as the server's domainToASCII does.
    const host = new URL(`http://${lower.slice(at + 1)}`).hostname;
    // Digits of another script read as an IPv4 address are kept as written, as on the server.
    return /^\d+\.\d+\.\d+\.\d+$/.test(host) ? lower : `${lower.slice(0, at)}@${host}`;
  } catch {
    return lower;
  }
}
