import { DomainError } from '../../domain/errors.js';
import { requirePoll } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';
import type { ExportSlots } from './export-slots.js';

const csvCell = (v: unknown): string => {
  let s = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  // A leading =, +, - or @ would run as a formula in a spreadsheet.
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** How often a running export checks its caller's key and access again. */
export const EXPORT_RECHECK_MS = 5_000;

/**
 * CSV of a poll's responses, one row per answer, produced page by page so memory stays flat. It
 * holds one of its account's export slots from its first chunk until it ends or is abandoned.
 * Its caller is checked again every EXPORT_RECHECK_MS: a key revoked or a member removed
 * meanwhile ends the export at its next page, as it would refuse their next request.
 */
export async function* exportResponsesCsv(
  deps: Deps,
  caller: Caller,
  pollId: string,
  slots: ExportSlots,
): AsyncGenerator<string> {
  const poll = await requirePoll(deps.store, caller, pollId, 'read');
  const release = slots.take(poll.accountId);
  let checkedAt = deps.clock.now().getTime();
  const stillAllowed = async () => {
    if (deps.clock.now().getTime() - checkedAt < EXPORT_RECHECK_MS) return;
    const now = await deps.store.keys.findLive(caller.keyId);
    if (!now) throw new DomainError('unauthenticated', 'the API key was revoked while the export ran');
    await requirePoll(deps.store, now, pollId, 'read');
    checkedAt = deps.clock.now().getTime();
  };
  try {
    yield* rowsOf(deps, pollId, stillAllowed);
  } finally {
    release();
  }
}

async function* rowsOf(deps: Deps, pollId: string, stillAllowed: () => Promise<void>): AsyncGenerator<string> {
  const slides = new Map((await deps.store.slides.listByPoll(pollId)).map((s) => [s.id, s]));
  yield (
    ['responseId', 'participantId', 'slideId', 'slideTitle', 'slideType', 'value', 'synthetic', 'createdAt'].join(',') +
    '\r\n'
  );
  let cursor: string | undefined;
  for (;;) {
    await stillAllowed();
    const page = await deps.store.responses.list({ pollId }, { startCursor: cursor, limit: 500 });
    let chunk = '';
    for (const r of page.data) {
      const slide = slides.get(r.slideId);
      chunk +=
        [
          r.id,
          r.participantId,
          r.slideId,
          slide?.title ?? '',
          slide?.type ?? '',
          r.value,
          r.synthetic,
          r.createdAt.toISOString(),
        ]
          .map(csvCell)
          .join(',') + '\r\n';
    }
    if (chunk) yield chunk;
    if (!page.hasNextPage || !page.endCursor) return;
    cursor = page.endCursor;
  }
}
