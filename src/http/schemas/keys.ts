import { Type } from '@sinclair/typebox';
import { ROLES } from '../../domain/access.js';
import { AnyId, Email, Instant, Nullable, PageQuery, StringEnum, Strict } from './common.js';

export const KeyListQuery = Strict({ accountId: AnyId, ...PageQuery });

export const CreateKeyBody = Strict({
  accountId: AnyId,
  email: Email,
  role: StringEnum(ROLES, { description: 'no higher than the caller’s own role' }),
});

export const RevokeKeyQuery = Strict({ keyId: AnyId });

export const RemoveMemberQuery = Strict({ accountId: AnyId, email: Email });

export const ApiKey = Type.Object({
  id: Type.String(),
  prefix: Nullable(Type.String({ description: 'the first characters of the key, to tell keys apart' })),
  email: Type.String(),
  role: StringEnum(ROLES),
  createdAt: Instant,
  lastUsedAt: Nullable(Instant),
  revokedAt: Nullable(Instant),
});

export const CreatedKey = Type.Object({
  userId: Type.String(),
  apiKey: Type.String({ description: 'shown only in this answer' }),
  role: StringEnum(ROLES),
});

export const RevokedKey = Type.Object({ id: Type.String(), revoked: Type.Literal(true) });

export const RemovedMember = Type.Object({
  accountId: Type.String(),
  email: Type.String(),
  removed: Type.Literal(true),
  revokedKeys: Type.Integer(),
});
