import { Type } from '@sinclair/typebox';
import { ROLES } from '../../domain/access.js';
import { AnyId, Email, Instant, Literals, Nullable, pageQuery, Strict, StringEnum } from './common.js';

const Role = Literals(...ROLES);

export const KeyListQuery = Strict({ accountId: AnyId, ...pageQuery('key') });

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
    limited: Type.Boolean({
      description: "made for this account only; false for the user's own key, which opens each of their accounts",
    }),
    createdAt: Instant,
    lastUsedAt: Nullable(
      Instant,
      "null too for a key of the user's own that also opens an account the caller neither owns nor administers: it may have been used there",
    ),
    revokedAt: Nullable(Instant, 'when it was revoked, or withdrawn from this account'),
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

export const KeyRevoked = Type.Object(
  {
    id: Type.String(),
    revoked: Type.Boolean({ description: 'true: it opens no account any more' }),
    withdrawnFrom: Type.Array(Type.String(), {
      description:
        'when it also opens accounts where the caller is not in or may not act: the accounts it was withdrawn from, where the caller may (revoked false)',
    }),
  },
  { title: 'KeyRevoked' },
);

export const MemberRemoved = Type.Object(
  {
    accountId: Type.String(),
    email: Type.String(),
    removed: Type.Literal(true),
    revokedKeys: Type.Integer({
      description:
        'keys revoked: the member’s keys made for this account (every key of theirs when they are left in no account), the keys they made for its other members, and the keys made with those, on down',
    }),
  },
  { title: 'MemberRemoved' },
);
