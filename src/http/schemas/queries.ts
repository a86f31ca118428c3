import { AnyId, pageQuery, Strict } from './common.js';

/** A poll's participants, paged by their place in the list. */
export const PollPageQuery = Strict({ pollId: AnyId, ...pageQuery('prt') });

export const PollQuery = Strict({ pollId: AnyId });
