import { ROLES } from '../../domain/access.js';
import { AnyId, Email, Literals, PageQuery, Strict } from './common.js';

const Role = Literals(...ROLES);

export const KeyListQuery = Strict({ accountId: AnyId, ...PageQuery });

export const CreateKeyBody = Strict({ accountId: AnyId, email: Email, role: Role });

export const RevokeKeyQuery = Strict({ keyId: AnyId });

export const RemoveMemberQuery = Strict({ accountId: AnyId, email: Email });
