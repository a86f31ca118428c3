// The signed-in session: the API key, kept only in this browser tab's sessionStorage (closing
// the tab forgets it), and the context every signed-in view reads the client and account from.

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

function read(name: string): string | null {
  try {
    return sessionStorage.getItem(name);
  } catch {
    return null;
  }
}

export const storedKey = (): string | null => read(KEY);
export const storedAccount = (): string | null => read(ACCOUNT);

export function storeKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function storeAccount(accountId: string): void {
  sessionStorage.setItem(ACCOUNT, accountId);
}

export function forget(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(ACCOUNT);
}
