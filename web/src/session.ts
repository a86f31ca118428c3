// The API key lives only in this browser tab's sessionStorage: closing the tab forgets it.

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
