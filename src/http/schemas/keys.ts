import { Type } from '@sinclair/typebox';
import { ROLES } from '../../domain/access.js';
import { AnyId, Email, Instant, Literals, Nullable, PageQuery, Strict, StringEnum } from './common.js';

const Role = Literals(...ROLES);

export const KeyListQuery = Strict({ accountId: AnyId, ...PageQuery });

export const CreateKeyBody = Strict({ accountId: AnyId, email: Email, role: Role });

export const RevokeKeyQuery = Strict({ keyId: AnyId });

export const RemoveMemberQuery = Strict({ accountId: AnyId, email: Email });

// ---- Answers ----------------------------------------------------------------------------------

/** A key as GET /keys lists it: its first characters, never the key. */
export const ApiKey = Type.Object(
  {
    id: Type.String(),
    prefix: Nullable(Type.String({ description: "the key's first characters; null for a key made before prefixes" })),
    email: Type.String({ description: "its member's email" }),
    role: StringEnum(ROLES),
    createdAt: Instant,
    lastUsedAt: Nullable(Instant),
    revokedAt: Nullable(Instant),
  },
  { title: 'ApiKey' },
);

export const CreatedKey = Type.Object(
  {
    userId: Type.String(),
    apiKey: Type.String({ description: 'the key: shown in this answer only' }),
    role: StringEnum(ROLES),
  },
  { title: 'CreatedKey' },
);

export const KeyRevoked = Type.Object({ id: Type.String(), revoked: Type.Literal(true) }, { title: 'KeyRevoked' });

export const MemberRemoved = Type.Object(
  {
    accountId: Type.String(),
    email: Type.String(),
    removed: Type.Literal(true),
    revokedKeys: Type.Integer({ description: 'keys revoked because the user is left in no account' }),
  },
  { title: 'MemberRemoved' },
);
