import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * Whether an Authorization header carries `Bearer <token>` with exactly this token. Compared
 * as digests in constant time: the answer's timing tells nothing about the token's characters
 * or length.
 */
export function bearerMatches(authorization: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return timingSafeEqual(digest(m?.[1] ?? ''), digest(token)) && !!m;
}
