/**
 * An address as the API compares members' addresses: lower case, its domain in ASCII
 * (punycode), so that `jörg@exämple.de` and `JÖRG@xn--exmple-cua.de` name one member.
 */
export function comparableAddress(email: string): string {
  const lower = email.trim().toLowerCase();
  const at = lower.lastIndexOf('@');
  if (at < 0) return lower;
  try {
    // The URL parser turns a host into its ASCII form, as the server's domainToASCII does.
    return `${lower.slice(0, at)}@${new URL(`http://${lower.slice(at + 1)}`).hostname}`;
  } catch {
    return lower;
  }
}
