import { AnyId, PageQuery, Strict } from './common.js';

export const PollPageQuery = Strict({ pollId: AnyId, ...PageQuery });

export const PollQuery = Strict({ pollId: AnyId });
