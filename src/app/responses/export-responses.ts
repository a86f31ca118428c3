import { requirePoll } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';
import type { ExportSlots } from './export-slots.js';

const csvCell = (v: unknown): string => {
  let s = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  // A leading =, +, - or @ would run as a formula in a spreadsheet.
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/**
 * CSV of a poll's responses, one row per answer, produced page by page so memory stays flat. It
 * holds one of its account's export slots from its first chunk until it ends or is abandoned.
 */
export async function* exportResponsesCsv(
  deps: Deps,
  caller: Caller,
  pollId: string,
  slots: ExportSlots,
): AsyncGenerator<string> {
  const poll = await requirePoll(deps.store, caller, pollId, 'read');
  const release = slots.take(poll.accountId);
  try {
    yield* rowsOf(deps, pollId);
  } finally {
    release();
  }
}

async function* rowsOf(deps: Deps, pollId: string): AsyncGenerator<string> {
  const slides = new Map((await deps.store.slides.listByPoll(pollId)).map((s) => [s.id, s]));
  yield (
    ['responseId', 'participantId', 'slideId', 'slideTitle', 'slideType', 'value', 'synthetic', 'createdAt'].join(',') +
    '\r\n'
  );
  let cursor: string | undefined;
  for (;;) {
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
