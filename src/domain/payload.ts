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

const EMAIL =
  /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+/g;

function collect(value: unknown, into: string[], depth = 0): void {
  if (depth > 8) return;
  if (typeof value === 'string') {
    for (const m of value.matchAll(EMAIL)) into.push(m[0].toLowerCase());
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
  complete: boolean;
  at: Date;
}): Payload {
  // Anonymous mode: no address leaves the service, whatever the answers hold.
  // Addresses come from every submission's metadata, so a later one does not hide an earlier one's.
  const emails = input.anonymous ? [] : extractEmails(input.answers, input.participantMetadata, input.responseMetadata);
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
