import { Type } from '@sinclair/typebox';
import { Instant, Nullable, StringEnum } from './common.js';

// ---- Answers ----------------------------------------------------------------------------------

const Named = Type.Object({ id: Type.String(), title: Type.String() });

/** A failure-alert email as sent, with what it says as data. */
export const AlertEmail = Type.Object(
  {
    id: Type.String(),
    accountId: Type.String(),
    endpointId: Type.String({ description: 'the failing target: a webhook id, or a logic-triggered URL' }),
    webhookId: Nullable(Type.String({ description: 'null for a logic-triggered URL' })),
    pollId: Type.String(),
    kind: StringEnum(['first', 'reminder']),
    sequence: Type.Integer({ description: '1 for the first email about a failure, 2 and on for its reminders' }),
    recipients: Type.Array(Type.String()),
    subject: Type.String(),
    text: Type.String(),
    html: Type.String(),
    details: Type.Object(
      {
        endpoint: Type.String({ description: 'the URL' }),
        survey: Named,
        question: Nullable(Named),
        trigger: Type.String(),
        configuredIn: Type.String(),
        whatWentWrong: Type.String(),
        responsesLostPastWeek: Type.Integer(),
      },
      { additionalProperties: true, description: 'what the email says, field by field' },
    ),
    sentAt: Instant,
  },
  { title: 'AlertEmail' },
);
