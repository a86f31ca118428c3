import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Readable } from 'node:stream';
import type { Deps } from '../../app/ports/index.js';
import { exportResponsesCsv } from '../../app/responses/export-responses.js';
import type { ExportSlots } from '../../app/responses/export-slots.js';
import { listEmails } from '../../app/responses/list-emails.js';
import { listParticipants } from '../../app/responses/list-participants.js';
import { listResponses } from '../../app/responses/list-responses.js';
import type { SubmissionQueue } from '../../app/responses/submission-queue.js';
import { callerOf } from '../auth.js';
import { queryEnd, queryInstant } from '../validation.js';
import { PollPageQuery } from '../schemas/queries.js';
import { Answers, Data, Page } from '../schemas/common.js';
import {
  ExportQuery,
  Participant,
  ParticipantEmails,
  ResponseRow,
  ResponsesQuery,
  ScopeQuery,
  SubmitBody,
  SubmitResult,
} from '../schemas/responses.js';

const tags = ['responses'];

export const responseRoutes =
  (deps: Deps, submissions: SubmissionQueue, exports: ExportSlots): FastifyPluginAsync =>
  async (root) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/participant/responses',
      {
        config: { auth: 'optional' },
        schema: {
          tags,
          summary: 'Submit answers (public for visible polls; apiOnly polls need a key of the account)',
          body: SubmitBody,
          // A key is optional: none for a public poll, one of the poll's account for an apiOnly one.
          security: [{}, { bearer: [] }],
          response: Answers({ 201: Data(SubmitResult) }),
        },
      },
      async (req, reply) =>
        reply.status(201).send({ data: await submissions.submit(req.caller, req.body, req.bodyBytes) }),
    );
    app.get(
      '/responses',
      {
        schema: {
          tags,
          summary: 'Responses of a poll or an account',
          querystring: ResponsesQuery,
          response: Answers({ 200: Page(ResponseRow) }),
        },
      },
      async (req) => {
        const { startCursor, limit, createdAfter, createdBefore, ...scope } = req.query;
        return listResponses(
          deps,
          callerOf(req),
          {
            ...scope,
            createdAfter: queryInstant(createdAfter, 'createdAfter'),
            createdBefore: queryEnd(createdBefore, 'createdBefore'),
          },
          { startCursor, limit },
        );
      },
    );
    app.get(
      '/participants',
      {
        schema: {
          tags,
          summary: 'Participants of a poll',
          querystring: PollPageQuery,
          response: Answers({ 200: Page(Participant) }),
        },
      },
      async (req) =>
        listParticipants(deps, callerOf(req), req.query.pollId, {
          startCursor: req.query.startCursor,
          limit: req.query.limit,
        }),
    );
    app.get(
      '/emails',
      {
        schema: {
          tags,
          summary: 'Email addresses found per participant',
          description:
            "A page ends early, with hasNextPage, once its respondents' stored answers pass 8 MiB; one respondent is always listed.",
          querystring: ScopeQuery,
          response: Answers({ 200: Page(ParticipantEmails) }),
        },
      },
      async (req) => {
        const { startCursor, limit, ...scope } = req.query;
        return listEmails(deps, callerOf(req), scope, { startCursor, limit });
      },
    );
    app.get(
      '/responses/export',
      {
        schema: {
          tags,
          summary: 'All responses of a poll as CSV (streamed), by default those created up to its start',
          querystring: ExportQuery,
          response: Answers({
            // Streamed: the body is sent as it is read, never serialised against this schema.
            200: Type.Unsafe<string | Readable>({
              description: 'one row per answer, a header row first',
              content: { 'text/csv': { schema: { type: 'string' } } },
            }),
          }),
        },
      },
      async (req, reply) => {
        const { pollId, createdAfter, createdBefore, bom } = req.query;
        const window = {
          pollId,
          bom,
          createdAfter: queryInstant(createdAfter, 'createdAfter'),
          createdBefore: queryEnd(createdBefore, 'createdBefore'),
        };
        const rows = exportResponsesCsv(deps, callerOf(req), window, exports);
        // The export's slot is given back when the response ends, the client gone or not
        // (even before the first chunk): a stream destroyed before it reads the generator
        // would not end it. A return asked for while a chunk is being made runs after it.
        const end = () => void rows.return(undefined).catch(() => {});
        reply.raw.once('close', end);
        // Pull the first chunk (made once the first page is read) before answering, so that a
        // 404 or a storage failure is still a problem document.
        const first = await rows.next();
        if (reply.raw.destroyed || req.raw.destroyed) end();
        // One chunk waiting at a time: chunks are about 64K characters (export-responses.ts).
        const stream = Readable.from(
          (async function* () {
            if (!first.done) yield first.value;
            yield* rows;
          })(),
          { highWaterMark: 1 },
        );
        return reply
          .type('text/csv; charset=utf-8')
          .header('cache-control', 'no-store')
          .header('content-disposition', `attachment; filename="responses-${req.query.pollId}.csv"`)
          .send(stream);
      },
    );
  };
