import { createHash } from 'node:crypto';
import { randomBase62 } from './ids.js';

export const API_KEY_PATTERN = /^cvk_[0-9A-Za-z]{32}$/;

export function newApiKey(): string {
  return `cvk_${randomBase62(32)}`;
}

/** Keys are stored only as this hash; a lookup by hash needs no constant-time compare. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** What a key list shows of a key: its first characters, enough to tell keys apart, useless to an attacker. */
export const keyPrefix = (key: string): string => key.slice(0, 8);
