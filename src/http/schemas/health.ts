import { Type } from '@sinclair/typebox';
import { StringEnum } from './common.js';

// ---- Answers ----------------------------------------------------------------------------------

export const Liveness = Type.Object({ status: Type.Literal('ok') });

/** 200 ready, or 503 unavailable (draining, or storage unreachable). */
export const Readiness = Type.Object({ status: StringEnum(['ready', 'unavailable']) });
