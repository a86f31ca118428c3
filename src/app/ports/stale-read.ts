/**
 * A write refused because a row it refers to was deleted after the use case read it (a foreign
 * key to a poll or webhook deleted meanwhile), or deadlocked with that deletion before it
 * committed. The transaction rolled back; run again, the use case reads afresh and answers as
 * the deletion says (a 404, or a webhook left out).
 */
export class StaleReadError extends Error {
  constructor(cause: unknown) {
    super('a row this write refers to was deleted after it was read', { cause });
  }
}
