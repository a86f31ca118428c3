import { DomainError } from './errors.js';

/**
 * A window given by its start and its end: an end not after the start selects nothing and is
 * most likely a swapped pair, so it is refused (at the end's path) rather than answered empty.
 */
export function checkWindow(
  window: { start?: Date; end?: Date },
  names: { start: string; end: string; endPath: string },
): void {
  if (!window.start || !window.end || window.end > window.start) return;
  throw new DomainError('validation_failed', `${names.end} must be after ${names.start}`, [
    { path: names.endPath, message: `must be after ${names.start}` },
  ]);
}

/** The window of a listing's `createdAfter` and `createdBefore` query parameters. */
export const CREATED = { start: 'createdAfter', end: 'createdBefore', endPath: 'query:/createdBefore' };
