import { addressesIn } from './email-address.js';
import { isPlainObject, MAX_NESTING } from './merge.js';
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

/** The most addresses `emails` holds: the first found. Bounds a payload whatever a respondent gave. */
export const MAX_EMAILS = 100;

/** Adds the addresses in `value` to `found`; false once it holds MAX_EMAILS. */
function collect(value: unknown, found: Set<string>, depth = 0): boolean {
  if (depth > MAX_NESTING) return true;
  if (typeof value === 'string') return addressesIn(value, (a) => found.add(a).size < MAX_EMAILS);
  if (Array.isArray(value)) return value.every((v) => collect(v, found, depth + 1));
  if (isPlainObject(value)) return Object.values(value).every((v) => collect(v, found, depth + 1));
  return true;
}

/** Answers first, then participant metadata, then response metadata (each submission's, in order); deduplicated, order kept. */
export function extractEmails(
  answers: readonly { value: unknown }[],
  participantMetadata: unknown,
  responseMetadata: unknown,
): string[] {
  const found = new Set<string>();
  // Stops at the first source that fills the list.
  void (
    answers.every((a) => collect(a.value, found)) &&
    collect(participantMetadata, found) &&
    collect(responseMetadata, found)
  );
  return [...found];
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
          // A submission's answers share its metadata (read once): walked once.
          [...new Set(input.respondent.map((r) => r.metadata))],
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

/** A JSON string token, as JSON.stringify writes one. */
const STRING = '"(?:[^"\\\\]|\\\\.)*"';

/**
 * The end of a serialised payload: `email` and `emails` are its last two keys (buildPayload
 * writes them so), and no string token can hold an unescaped quote, so this matches only the
 * payload's own two fields. One pattern for JavaScript and PostgreSQL's regular expressions.
 */
export const ADDRESSES_AT_END = `,"email":(?:null|${STRING}),"emails":\\[(?:${STRING}(?:,${STRING})*)?\\]\\}$`;

/** The same end, with no address: what an anonymous poll's payload says. */
export const NO_ADDRESSES_AT_END = ',"email":null,"emails":[]}';

/** A serialised payload as an anonymous poll would send it; the rest of its bytes unchanged. */
export const withoutAddresses = (body: string): string =>
  body.replace(new RegExp(ADDRESSES_AT_END), NO_ADDRESSES_AT_END);
