// The signed-in session: the API key, kept only in this browser tab's sessionStorage, and the
// context every signed-in view reads the client and account from. A browser may give a closed
// tab's sessionStorage back (a tab reopened, a session restored), so a key not used for IDLE_MS
// is forgotten when the page opens again.

import { createContext, useContext } from 'react';
import type { Membership } from '../api/types';
import type { Api } from './api';

export type Session = { api: Api; account: Membership };

/** The plans the API serves (premium and up); on the others every account route answers "plan required". */
const SERVED_PLANS: readonly string[] = ['premium', 'enterprise'];
export const planServed = (plan: string): boolean => SERVED_PLANS.includes(plan);

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in view');
  return s;
}

const KEY = 'canvass.apiKey';
const ACCOUNT = 'canvass.accountId';
const USED = 'canvass.usedAt';

/** How long a key kept in the tab may go unused (no click, no key pressed) and still open it again. */
export const IDLE_MS = 30 * 60 * 1000;

function read(name: string): string | null {
  try {
    return sessionStorage.getItem(name);
  } catch {
    return null;
  }
}

export const storedKey = (): string | null => read(KEY);
export const storedAccount = (): string | null => read(ACCOUNT);

/**
 * The key kept in this tab when the page opens, and whether it went unused for IDLE_MS
 * (`expired`: the caller forgets it).
 */
export function restoredKey(now = Date.now()): { key: string | null; expired: boolean } {
  const key = read(KEY);
  if (!key) return { key: null, expired: false };
  const used = read(USED);
  // A key kept without a time of use (stored by a dashboard that kept none) counts as used now.
  if (used === null) {
    markUsed(now);
    return { key, expired: false };
  }
  const usedAt = Number(used);
  return { key, expired: !(Number.isFinite(usedAt) && now - usedAt <= IDLE_MS) };
}

/** Marks the kept key as used now. */
export function markUsed(now = Date.now()): void {
  try {
    if (read(KEY)) sessionStorage.setItem(USED, String(now));
  } catch {
    // Storage refused (full, or disabled): the key is then forgotten at the next page load.
  }
}

export function storeKey(key: string): void {
  sessionStorage.setItem(KEY, key);
  markUsed();
}

export function storeAccount(accountId: string): void {
  sessionStorage.setItem(ACCOUNT, accountId);
}

export function forget(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(ACCOUNT);
  sessionStorage.removeItem(USED);
}
