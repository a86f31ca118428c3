import { isPlainObject } from './merge.js';
import type { SlideType } from './slide.js';

export type EventType = 'submitted-responses' | 'completed-survey';

export type AnswerForPayload = { slideId: string; title: string; type: SlideType; value: unknown; createdAt: Date };

export type Payload = {
  type: EventType;
  accountId: string;
  pollId: string;
  participantId: string;
  metadata: Record<string, unknown>;
  responses: Record<string, { slideId: string; title: string; type: SlideType; value: unknown; createdAt: string }>;
  submissionsComplete: boolean;
  timestamp: number;
  email: string | null;
  emails: string[];
};

/** The characters of an address's local part (RFC 5322 atext, and the dot). */
const LOCAL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.!#$%&'*+/=?^_`{|}~-";
const IS_LOCAL = new Uint8Array(128);
for (const c of LOCAL) IS_LOCAL[c.charCodeAt(0)] = 1;
/** An address: a run of local-part characters, `@`, a domain of two or more labels. Sticky: tried at one place. */
const ADDRESS_AT = new RegExp(
  `[${LOCAL}]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+`,
  'y',
);

/**
 * The addresses in `text`, as a global search for ADDRESS_AT would find them, in time linear in
 * the text's length: the pattern is tried only at the start of the run of local-part characters
 * before each `@`. Searched from every position instead, a long run with no address in it costs
 * the square of its length: about 20 s for 150,000 characters.
 */
function addressesIn(text: string, into: string[]): void {
  let from = 0;
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', Math.max(at + 1, from))) {
    let start = at;
    while (start > from && IS_LOCAL[text.charCodeAt(start - 1)] === 1) start--;
    if (start === at) continue;
    ADDRESS_AT.lastIndex = start;
    const m = ADDRESS_AT.exec(text);
    if (!m) continue;
    into.push(m[0].toLowerCase());
    from = ADDRESS_AT.lastIndex;
  }
}

function collect(value: unknown, into: string[], depth = 0): void {
  if (depth > 8) return;
  if (typeof value === 'string') {
    addressesIn(value, into);
  } else if (Array.isArray(value)) value.forEach((v) => collect(v, into, depth + 1));
  else if (isPlainObject(value)) Object.values(value).forEach((v) => collect(v, into, depth + 1));
}

/** Answers first, then participant metadata, then response metadata (each submission's, in order); deduplicated, order kept. */
export function extractEmails(
  answers: readonly { value: unknown }[],
  participantMetadata: unknown,
  responseMetadata: unknown,
): string[] {
  const found: string[] = [];
  answers.forEach((a) => collect(a.value, found));
  collect(participantMetadata, found);
  collect(responseMetadata, found);
  return [...new Set(found)];
}

export function buildPayload(input: {
  type: EventType;
  accountId: string;
  pollId: string;
  participantId: string;
  anonymous: boolean;
  participantMetadata: Record<string, unknown>;
  /** The metadata of each submission the event covers, oldest first. */
  responseMetadata: readonly Record<string, unknown>[];
  answers: readonly AnswerForPayload[];
  /**
   * Every answer of the respondent, oldest first, when the event covers only some of them (a
   * partial batch): addresses are the respondent's, wherever they gave them, as GET /emails lists.
   */
  respondent?: readonly { value: unknown; metadata: Record<string, unknown> }[];
  complete: boolean;
  at: Date;
}): Payload {
  // Anonymous mode: `email` is null and `emails` empty, whatever the answers hold; the answers
  // and metadata themselves go out as the respondent gave them.
  // Addresses come from every submission's metadata, so a later one does not hide an earlier one's.
  const emails = input.anonymous
    ? []
    : input.respondent
      ? extractEmails(
          input.respondent,
          input.participantMetadata,
          input.respondent.map((r) => r.metadata),
        )
      : extractEmails(input.answers, input.participantMetadata, input.responseMetadata);
  // Several submissions (a batch, or a completed survey) merge their metadata in order: later keys win.
  const metadata =
    input.responseMetadata.length === 1 ? input.responseMetadata[0]! : Object.assign({}, ...input.responseMetadata);
  const responses: Payload['responses'] = {};
  for (const a of input.answers)
    responses[a.slideId] = {
      slideId: a.slideId,
      title: a.title,
      type: a.type,
      value: a.value,
      createdAt: a.createdAt.toISOString(),
    };
  return {
    type: input.type,
    accountId: input.accountId,
    pollId: input.pollId,
    participantId: input.participantId,
    metadata,
    responses,
    submissionsComplete: input.complete,
    timestamp: input.at.getTime(),
    email: emails[0] ?? null,
    emails,
  };
}
