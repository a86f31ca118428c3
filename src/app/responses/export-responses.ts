import { DomainError } from '../../domain/errors.js';
import { CREATED, checkWindow } from '../../domain/time-window.js';
import { requirePoll } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';
import type { ExportSlots } from './export-slots.js';

const csvCell = (v: unknown): string => {
  let s = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  // A leading =, +, - or @ would run as a formula in a spreadsheet.
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  // Quoted also for ; and tab, which spreadsheets in some locales (or their text import) take as
  // separators: unquoted, `x;=1+1` would split into a cell that starts with a formula.
  return /[",;\t\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** Answers read per page: a page is held in memory whole, and one answer may be ~150 KB. */
export const EXPORT_PAGE_ROWS = 100;
/** Text handed to the response at a time (about this many characters, and one row more), so that what waits in its buffer stays small. */
const CHUNK_CHARS = 64 * 1024;

/** The answers an export holds: those created by its start, within the window given. */
export type ExportWindow = {
  pollId: string;
  createdAfter?: Date | undefined;
  createdBefore?: Date | undefined;
  /** Starts the file with a byte order mark: Excel reads a file opened from disk as UTF-8 only with it. */
  bom?: boolean | undefined;
};

/** How often a running export checks its caller's key and access again. */
export const EXPORT_RECHECK_MS = 5_000;

/**
 * CSV of a poll's responses, one row per answer, produced page by page so memory stays flat. It
 * holds one of its account's export slots from its first chunk until it ends or is abandoned.
 * Its caller is checked again every EXPORT_RECHECK_MS: a key revoked or a member removed
 * meanwhile ends the export at its next page, as it would refuse their next request.
 * Its first chunk is made once the first page is read, so that a failure to read it is still an
 * error answer rather than a file cut short. It ends at the answers created by the time it
 * started (or before `createdBefore`, if earlier), so that it ends however fast answers arrive.
 */
export async function* exportResponsesCsv(
  deps: Deps,
  caller: Caller,
  window: ExportWindow,
  slots: ExportSlots,
): AsyncGenerator<string> {
  checkWindow({ start: window.createdAfter, end: window.createdBefore }, CREATED);
  const { pollId } = window;
  const poll = await requirePoll(deps.store, caller, pollId, 'read');
  // Never past the answers created by its start, whatever createdBefore says: it ends however
  // fast answers arrive, and holds its slot no longer than its file takes.
  const started = deps.clock.now().getTime() + 1;
  const filter = {
    pollId,
    createdAfter: window.createdAfter,
    createdBefore: new Date(Math.min(window.createdBefore?.getTime() ?? started, started)),
  };
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
    yield* rowsOf(deps, filter, stillAllowed, window.bom ? '\uFEFF' : '');
  } finally {
    release();
  }
}

async function* rowsOf(
  deps: Deps,
  filter: { pollId: string; createdAfter?: Date | undefined; createdBefore: Date },
  stillAllowed: () => Promise<void>,
  start: string,
): AsyncGenerator<string> {
  const slides = new Map((await deps.store.slides.listByPoll(filter.pollId)).map((s) => [s.id, s]));
  let chunk =
    start +
    ['responseId', 'participantId', 'slideId', 'slideTitle', 'slideType', 'value', 'synthetic', 'createdAt'].join(',') +
    '\r\n';
  let cursor: string | undefined;
  for (;;) {
    await stillAllowed();
    const page = await deps.store.responses.list(filter, { startCursor: cursor, limit: EXPORT_PAGE_ROWS });
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
      if (chunk.length >= CHUNK_CHARS) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
    chunk = '';
    if (!page.hasNextPage || !page.endCursor) return;
    cursor = page.endCursor;
  }
}
