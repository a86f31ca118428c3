import { DomainError } from '../domain/errors.js';
import { extractEmails } from '../domain/payload.js';
import { requireAccount, requirePoll } from './access.js';
import type { Caller, Deps, Page, PageRequest, ParticipantRow, ResponseFilter, ResponseRow } from './ports.js';

type Scope = { pollId?: string; accountId?: string };

async function authorizeScope(deps: Deps, caller: Caller, scope: Scope): Promise<Scope> {
  if (scope.pollId) {
    await requirePoll(deps.store, caller, scope.pollId, 'read');
    return { pollId: scope.pollId };
  }
  if (scope.accountId) {
    await requireAccount(deps.store, caller, scope.accountId, 'read');
    return { accountId: scope.accountId };
  }
  throw new DomainError('validation_failed', 'give pollId or accountId', [{ path: 'query:/pollId', message: 'pollId or accountId is required' }]);
}

export async function listResponses(deps: Deps, caller: Caller, filter: ResponseFilter, page: PageRequest): Promise<Page<ResponseRow>> {
  const scope = await authorizeScope(deps, caller, filter);
  return deps.store.responses.list({ ...filter, ...scope }, page);
}

export type ParticipantView = Omit<ParticipantRow, 'seq'>;

/** Participants of a poll; the internal sort key stays internal (it is only the opaque cursor). */
export async function listParticipants(deps: Deps, caller: Caller, pollId: string, page: PageRequest): Promise<Page<ParticipantView>> {
  await requirePoll(deps.store, caller, pollId, 'read');
  const result = await deps.store.responses.listParticipants({ pollId }, page);
  return { ...result, data: result.data.map(({ seq: _seq, ...p }) => p) };
}

export type ParticipantEmails = { pollId: string; participantId: string; email: string | null; emails: string[] };

/** Addresses found per participant, by the same rule as the webhook payload (SPEC §2.4). */
export async function listEmails(deps: Deps, caller: Caller, scope: Scope, page: PageRequest): Promise<Page<ParticipantEmails>> {
  const s = await authorizeScope(deps, caller, scope);
  const participants = await deps.store.responses.listParticipants(s, page);
  const data: ParticipantEmails[] = [];
  const anonymous = new Map<string, boolean>();
  for (const p of participants.data) {
    if (!anonymous.has(p.pollId)) anonymous.set(p.pollId, !!(await deps.store.polls.get(p.pollId))?.settings.anonymous);
    const responses = await deps.store.responses.ofParticipant(p.pollId, p.id);
    const emails = anonymous.get(p.pollId) ? [] : extractEmails(responses, p.metadata, responses.map((r) => r.metadata));
    data.push({ pollId: p.pollId, participantId: p.id, email: emails[0] ?? null, emails });
  }
  return { ...participants, data };
}

const csvCell = (v: unknown): string => {
  let s = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  // A leading =, +, - or @ would run as a formula in a spreadsheet.
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** CSV of a poll's responses, one row per answer, produced page by page so memory stays flat. */
export async function* exportResponsesCsv(deps: Deps, caller: Caller, pollId: string): AsyncGenerator<string> {
  await requirePoll(deps.store, caller, pollId, 'read');
  const slides = new Map((await deps.store.slides.listByPoll(pollId)).map((s) => [s.id, s]));
  yield ['responseId', 'participantId', 'slideId', 'slideTitle', 'slideType', 'value', 'synthetic', 'createdAt'].join(',') + '\r\n';
  let cursor: string | undefined;
  for (;;) {
    const page = await deps.store.responses.list({ pollId }, { startCursor: cursor, limit: 500 });
    let chunk = '';
    for (const r of page.data) {
      const slide = slides.get(r.slideId);
      chunk += [r.id, r.participantId, r.slideId, slide?.title ?? '', slide?.type ?? '', r.value, r.synthetic, r.createdAt.toISOString()].map(csvCell).join(',') + '\r\n';
    }
    if (chunk) yield chunk;
    if (!page.hasNextPage || !page.endCursor) return;
    cursor = page.endCursor;
  }
}
