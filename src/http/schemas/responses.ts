import { Type } from '@sinclair/typebox';
import { AnyId, DateTime, FreeForm, Instant, Nullable, pageQuery, Strict } from './common.js';
import { Metadata } from './webhooks.js';

/**
 * The shapes an answer takes (its slide decides which, and names itself when one is wrong):
 * nothing that nests, so no submission waiting in the queue holds more than its text.
 */
const AnswerValue = Type.Union(
  [Type.String(), Type.Number(), Type.Boolean(), Type.Null(), Type.Array(Type.String(), { maxItems: 200 })],
  { description: "a choice's title, an array of titles (multi), a number, a string, or true" },
);

export const SubmitBody = Strict({
  pollId: AnyId,
  participantId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  answers: Type.Array(Strict({ slideId: AnyId, value: AnswerValue }), { maxItems: 200 }),
  metadata: Type.Optional(Metadata),
  participantMetadata: Type.Optional(Metadata),
  complete: Type.Optional(Type.Boolean()),
});

export const ResponsesQuery = Strict({
  pollId: Type.Optional(AnyId),
  accountId: Type.Optional(AnyId),
  createdAfter: Type.Optional(DateTime),
  createdBefore: Type.Optional(DateTime),
  ...pageQuery('rsp'),
});

/** A poll's CSV export: the answers created by the export's start, within the window given if any. */
export const ExportQuery = Strict({
  pollId: AnyId,
  createdAfter: Type.Optional(DateTime),
  createdBefore: Type.Optional(DateTime),
  bom: Type.Optional(
    Type.Boolean({
      description:
        'start the file with a UTF-8 byte order mark, by which Excel reads it as UTF-8 when opened from disk',
    }),
  ),
});

/** Participants of a poll or an account, paged by their place in the list. */
export const ScopeQuery = Strict({
  pollId: Type.Optional(AnyId),
  accountId: Type.Optional(AnyId),
  ...pageQuery('prt'),
});

// ---- Answers ----------------------------------------------------------------------------------

/** What a submission stored, and where the respondent goes next. */
export const SubmitResult = Type.Object(
  {
    participantId: Type.String(),
    responseIds: Type.Array(Type.String(), { description: 'the answers this submission stored' }),
    complete: Type.Boolean(),
    nextSlideId: Nullable(
      Type.String({ description: 'the slide to show next (a skip-to target, else the next in order); null: none' }),
    ),
    ended: Type.Boolean({ description: 'the survey is over for this respondent (complete, or ended by logic)' }),
  },
  { title: 'SubmitResult' },
);

/** One answer of one respondent. */
export const ResponseRow = Type.Object(
  {
    id: Type.String(),
    accountId: Type.String(),
    pollId: Type.String(),
    participantId: Type.String(),
    slideId: Type.String(),
    value: Type.Unknown({ description: 'the answer as submitted' }),
    metadata: FreeForm('the metadata sent with the answer'),
    synthetic: Type.Boolean({ description: 'made by a research run' }),
    createdAt: Instant,
  },
  { title: 'ResponseRow' },
);

export const Participant = Type.Object(
  {
    id: Type.String(),
    pollId: Type.String(),
    accountId: Type.String(),
    metadata: FreeForm("the submissions' participantMetadata, merged"),
    synthetic: Type.Boolean(),
    complete: Type.Boolean(),
    completedAt: Nullable(Instant),
    createdAt: Instant,
    updatedAt: Instant,
  },
  { title: 'Participant' },
);

/** The email addresses found in a participant's answers and metadata. */
export const ParticipantEmails = Type.Object(
  {
    pollId: Type.String(),
    participantId: Type.String(),
    email: Nullable(Type.String({ description: 'the first of emails' })),
    emails: Type.Array(Type.String()),
  },
  { title: 'ParticipantEmails' },
);
