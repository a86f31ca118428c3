import type { Kysely } from 'kysely';
import type { ResearchRepo, ResponseRepo } from '../../../app/ports/index.js';
import type { DB } from '../schema.js';
import { json } from './page.js';
import { participantReads, participantRow } from './participants.js';
import { metadataOnce } from './response-metadata.js';

// Large research runs insert in slices so one statement stays well under the parameter limit.
const CHUNK = 500;

function chunks<T>(rows: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += CHUNK) out.push(rows.slice(i, i + CHUNK));
  return out;
}

export function responseRepo(db: Kysely<DB>): ResponseRepo {
  return {
    ...participantReads(db),
    async insertParticipants(rows) {
      // A participant that already exists is left as it is: two first submissions of one
      // client-chosen id may race, and the second then finds (and locks) the first's row.
      for (const part of chunks(rows)) {
        await db
          .insertInto('participants')
          .values(part.map(participantRow))
          .onConflict((oc) => oc.columns(['poll_id', 'id']).doNothing())
          .execute();
      }
    },
    async insertResponses(rows) {
      const stored = metadataOnce(rows);
      let i = 0;
      for (const part of chunks(rows)) {
        await db
          .insertInto('responses')
          .values(
            part.map((r) => ({
              id: r.id,
              account_id: r.accountId,
              poll_id: r.pollId,
              participant_id: r.participantId,
              slide_id: r.slideId,
              value: json(r.value),
              metadata: stored[i]!.metadata,
              metadata_from: stored[i++]!.from,
              synthetic: r.synthetic,
              created_at: r.createdAt,
            })),
          )
          .execute();
      }
    },
  };
}

export function researchRepo(db: Kysely<DB>): ResearchRepo {
  return {
    async insert(r, idempotencyKey) {
      await db
        .insertInto('research_runs')
        .values({
          id: r.id,
          poll_id: r.pollId,
          account_id: r.accountId,
          participants: r.participants,
          seed: r.seed,
          responses_created: r.responsesCreated,
          created_at: r.createdAt,
          idempotency_key: idempotencyKey ?? null,
        })
        .execute();
    },
    async byIdempotencyKey(pollId, key) {
      const r = await db
        .selectFrom('research_runs')
        .selectAll()
        .where('poll_id', '=', pollId)
        .where('idempotency_key', '=', key)
        .executeTakeFirst();
      return (
        r && {
          id: r.id,
          pollId: r.poll_id,
          accountId: r.account_id,
          participants: r.participants,
          seed: r.seed,
          responsesCreated: r.responses_created,
          createdAt: r.created_at,
        }
      );
    },
    async participantsOf(pollId) {
      const r = await db
        .selectFrom('research_runs')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('participants'), eb.lit(0)).as('n'))
        .where('poll_id', '=', pollId)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
  };
}
