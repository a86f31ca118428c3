import { useState } from 'react';

/** Cursor paging state: the startCursor of each page opened so far (null for the first). */
export function useCursorPages() {
  const [stack, setStack] = useState<(string | null)[]>([null]);
  const page = stack.length - 1;
  return {
    page,
    cursor: stack[page] ?? null,
    first: () => setStack([null]),
    prev: () => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)),
    next: (endCursor: string | null) => endCursor && setStack((s) => [...s, endCursor]),
  };
}
