import { Type } from '@sinclair/typebox';
import { AnyId, DateTime, PageQuery, Strict } from './common.js';
import { Metadata } from './webhooks.js';

export const SubmitBody = Strict({
  pollId: AnyId,
  participantId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  answers: Type.Array(Strict({ slideId: AnyId, value: Type.Unknown() }), { maxItems: 200 }),
  metadata: Type.Optional(Metadata),
  participantMetadata: Type.Optional(Metadata),
  complete: Type.Optional(Type.Boolean()),
});

export const ResponsesQuery = Strict({
  pollId: Type.Optional(AnyId),
  accountId: Type.Optional(AnyId),
  createdAfter: Type.Optional(DateTime),
  createdBefore: Type.Optional(DateTime),
  ...PageQuery,
});

export const ScopeQuery = Strict({ pollId: Type.Optional(AnyId), accountId: Type.Optional(AnyId), ...PageQuery });
