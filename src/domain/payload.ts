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

const EMAIL = /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+/g;

function collect(value: unknown, into: string[], depth = 0): void {
  if (depth > 8) return;
  if (typeof value === 'string') {
    for (const m of value.matchAll(EMAIL)) into.push(m[0].toLowerCase());
  } else if (Array.isArray(value)) value.forEach((v) => collect(v, into, depth + 1));
  else if (isPlainObject(value)) Object.values(value).forEach((v) => collect(v, into, depth + 1));
}

/** SPEC §2.4 rule 1: answers first, then participant metadata, then response metadata; deduplicated, order kept. */
export function extractEmails(answers: readonly { value: unknown }[], participantMetadata: unknown, responseMetadata: unknown): string[] {
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
  responseMetadata: Record<string, unknown>;
  answers: readonly AnswerForPayload[];
  complete: boolean;
  at: Date;
}): Payload {
  // Anonymous mode (rule 2): no address leaves the service, whatever the answers hold.
  const emails = input.anonymous ? [] : extractEmails(input.answers, input.participantMetadata, input.responseMetadata);
  const responses: Payload['responses'] = {};
  for (const a of input.answers) responses[a.slideId] = { slideId: a.slideId, title: a.title, type: a.type, value: a.value, createdAt: a.createdAt.toISOString() };
  return {
    type: input.type,
    accountId: input.accountId,
    pollId: input.pollId,
    participantId: input.participantId,
    metadata: input.responseMetadata,
    responses,
    submissionsComplete: input.complete,
    timestamp: input.at.getTime(),
    email: emails[0] ?? null,
    emails,
  };
}
