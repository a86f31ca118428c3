import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { commitPoll } from '../../app/polls/commit-poll.js';
import { createPoll, type CreatePollInput } from '../../app/polls/create-poll.js';
import { deletePoll } from '../../app/polls/delete-poll.js';
import type { Deps } from '../../app/ports/index.js';
import { getPoll } from '../../app/polls/get-poll.js';
import { listPolls } from '../../app/polls/list-polls.js';
import { startResearch } from '../../app/polls/start-research.js';
import { getTranslations } from '../../app/polls/get-translations.js';
import { updateTranslations } from '../../app/polls/update-translations.js';
import { updatePoll } from '../../app/polls/update-poll.js';
import type { PollPatch } from '../../domain/poll.js';
import { callerOf } from '../auth.js';
import { Answers, AnyId, Data, DataWithSecret, Page, pageQuery, Strict } from '../schemas/common.js';
import {
  CommitBody,
  CreatePollBody,
  Poll,
  PollDeleted,
  PollItem,
  ResearchBody,
  ResearchRun,
  Translations,
  TranslationsBody,
  UpdatePollBody,
} from '../schemas/polls.js';
import { LanguageCode } from '../schemas/settings.js';

const tags = ['polls'];

export const pollRoutes =
  (deps: Deps): FastifyPluginAsync =>
  async (root) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();

    for (const url of ['/poll', '/survey']) {
      app.post(
        url,
        {
          schema: {
            tags,
            summary: url === '/poll' ? 'Create a poll (or preview it with dryRun)' : 'Alias of POST /poll',
            body: CreatePollBody,
            response: Answers({ 200: DataWithSecret(Poll), 201: DataWithSecret(Poll) }),
          },
        },
        async (req, reply) => {
          const { saved, poll, signingSecret } = await createPoll(deps, callerOf(req), req.body as CreatePollInput);
          return reply.status(saved ? 201 : 200).send({ data: poll, ...(signingSecret ? { signingSecret } : {}) });
        },
      );
    }

    app.post(
      '/commit',
      {
        schema: {
          tags,
          summary: 'Save a dry-run preview',
          body: CommitBody,
          response: Answers({ 200: DataWithSecret(Poll), 201: DataWithSecret(Poll) }),
        },
      },
      async (req, reply) => {
        const { id, isVisible: _v, slides: _s, createdAt: _c, updatedAt: _u, ...rest } = req.body.data;
        const strip = <T>(v: T | null | undefined) => (v === null ? undefined : v);
        const input = {
          ...rest,
          pageExcludeRules: strip(rest.pageExcludeRules),
          pageDisplaySettings: strip(rest.pageDisplaySettings),
          targetingSettings: strip(rest.targetingSettings),
          schedule: strip(rest.schedule),
          languageSettings: strip(rest.languageSettings),
        } as CreatePollInput;
        const { created, poll, signingSecret } = await commitPoll(deps, callerOf(req), id, input);
        return reply.status(created ? 201 : 200).send({ data: poll, ...(signingSecret ? { signingSecret } : {}) });
      },
    );

    app.get(
      '/poll',
      {
        schema: {
          tags,
          summary: 'Read a poll with its slides',
          querystring: Strict({ pollId: AnyId }),
          response: Answers({ 200: Data(Poll) }),
        },
      },
      async (req) => ({
        data: await getPoll(deps, callerOf(req), req.query.pollId),
      }),
    );

    app.get(
      '/polls',
      {
        schema: {
          tags,
          summary: "List an account's polls",
          description:
            "A page ends early, with hasNextPage, before its polls' stored settings pass 8 MiB (a poll keeps up to 1 MiB of translations); one poll is always listed.",
          querystring: Strict({ accountId: AnyId, ...pageQuery('poll') }),
          response: Answers({ 200: Page(PollItem) }),
        },
      },
      async (req) =>
        listPolls(deps, callerOf(req), req.query.accountId, {
          startCursor: req.query.startCursor,
          limit: req.query.limit,
        }),
    );

    app.post(
      '/poll/update',
      {
        schema: {
          tags,
          summary: 'Update a poll',
          body: UpdatePollBody,
          response: Answers({ 200: DataWithSecret(Poll) }),
        },
      },
      async (req) => {
        const { pollId, ...patch } = req.body;
        const { poll, signingSecret } = await updatePoll(deps, callerOf(req), pollId, patch as PollPatch);
        return { data: poll, ...(signingSecret ? { signingSecret } : {}) };
      },
    );

    app.delete(
      '/poll',
      {
        schema: {
          tags,
          summary: 'Delete a poll, its slides and its webhooks',
          querystring: Strict({ pollId: AnyId }),
          response: Answers({ 200: Data(PollDeleted) }),
        },
      },
      async (req) => ({
        data: await deletePoll(deps, callerOf(req), req.query.pollId),
      }),
    );

    app.post(
      '/research/start',
      {
        schema: {
          tags,
          summary: 'Generate synthetic respondents for a synthetic poll (201; 200 for a run its idempotencyKey made)',
          body: ResearchBody,
          response: Answers({ 200: Data(ResearchRun), 201: Data(ResearchRun) }),
        },
      },
      async (req, reply) => {
        const { run, replayed } = await startResearch(deps, callerOf(req), req.body);
        return reply.status(replayed ? 200 : 201).send({ data: run });
      },
    );

    app.get(
      '/poll/translations',
      {
        schema: {
          tags,
          summary: 'Read one language of a poll',
          querystring: Strict({ pollId: AnyId, language: LanguageCode }),
          response: Answers({ 200: Data(Translations) }),
        },
      },
      async (req) => ({ data: await getTranslations(deps, callerOf(req), req.query.pollId, req.query.language) }),
    );

    app.post(
      '/poll/translations/update',
      {
        schema: {
          tags,
          summary: 'Merge one language into the translations',
          body: TranslationsBody,
          response: Answers({ 200: Data(Translations) }),
        },
      },
      async (req) => ({
        data: await updateTranslations(deps, callerOf(req), req.body),
      }),
    );
  };
