import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { createKey } from '../../app/accounts/create-key.js';
import { listKeys } from '../../app/accounts/list-keys.js';
import { removeMember } from '../../app/accounts/remove-member.js';
import { revokeKey } from '../../app/accounts/revoke-key.js';
import type { Deps } from '../../app/ports/index.js';
import { callerOf } from '../auth.js';
import { Answers, Data, Page } from '../schemas/common.js';
import {
  ApiKey,
  CreatedKey,
  CreateKeyBody,
  KeyListQuery,
  KeyRevoked,
  MemberRemoved,
  RemoveMemberQuery,
  RevokeKeyQuery,
} from '../schemas/keys.js';

const tags = ['keys'];

export const keyRoutes =
  (deps: Deps): FastifyPluginAsync =>
  async (root) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/keys',
      {
        schema: {
          tags,
          summary: "The API keys of an account's members (owner, admin): a prefix, never the key",
          querystring: KeyListQuery,
          response: Answers({ 200: Page(ApiKey) }),
        },
      },
      async (req) => {
        const { accountId, ...page } = req.query;
        return listKeys(deps, callerOf(req), accountId, page);
      },
    );
    app.post(
      '/keys',
      {
        schema: {
          tags,
          summary: 'A new key for a member (added if new), with a role no higher than the caller’s; shown once',
          body: CreateKeyBody,
          response: Answers({ 201: Data(CreatedKey) }),
        },
      },
      async (req, reply) => reply.status(201).send({ data: await createKey(deps, callerOf(req), req.body) }),
    );
    app.delete(
      '/keys',
      {
        schema: {
          tags,
          summary:
            "Revoke a key at once (its next request is refused), or withdraw a member's own key from the caller's accounts where it also opens others",
          querystring: RevokeKeyQuery,
          response: Answers({ 200: Data(KeyRevoked) }),
        },
      },
      async (req) => ({ data: await revokeKey(deps, callerOf(req), req.query.keyId) }),
    );
    app.delete(
      '/members',
      {
        schema: {
          tags: ['members'],
          summary: 'Remove a member from an account; a user left in no account has every key revoked',
          querystring: RemoveMemberQuery,
          response: Answers({ 200: Data(MemberRemoved) }),
        },
      },
      async (req) => ({ data: await removeMember(deps, callerOf(req), req.query) }),
    );
  };
