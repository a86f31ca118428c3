import { Type } from '@sinclair/typebox';
import { StringEnum } from './common.js';

// ---- Answers ----------------------------------------------------------------------------------

/** 200 ok, or 503 failed (the process needs a restart: its embedded database stopped). */
export const Liveness = Type.Object({ status: StringEnum(['ok', 'failed']) });

/** 200 ready, or 503 unavailable (draining, storage unreachable, or taking no writes). */
export const Readiness = Type.Object({ status: StringEnum(['ready', 'unavailable']) });
