import { DomainError, invalid } from './errors.js';
import { isAddress } from './email-address.js';
import { CHOICE_TYPES, NON_ANSWERABLE, type Slide } from './slide.js';

/** Checks an answer's value against its slide: the value shape each slide type takes; the error names the slide. */
export function checkAnswerValue(slide: Slide, value: unknown, path: string): void {
  const bad = (what: string) => {
    throw invalid(path, `slide ${slide.id} (${slide.type}) expects ${what}`);
  };
  if (NON_ANSWERABLE.has(slide.type)) bad('no answer');
  if (CHOICE_TYPES.has(slide.type)) {
    const options = slide.answers.map((a) => a.title);
    const allowed = options.length ? options : slide.type === 'binary' ? ['Yes', 'No'] : [];
    if (slide.multi) {
      if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string'))
        bad('a non-empty array of answer titles');
      // Each title once: a longer array is no answer a respondent gives, and logic conditions
      // compare against every element.
      if ((value as string[]).length > allowed.length || new Set(value as string[]).size !== (value as string[]).length)
        bad('each answer title at most once');
      for (const v of value as string[]) if (!allowed.includes(v)) bad(`answers among: ${allowed.join(', ')}`);
      return;
    }
    if (typeof value !== 'string' || !allowed.includes(value)) bad(`one of: ${allowed.join(', ')}`);
    return;
  }
  switch (slide.type) {
    case 'star-rating':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 5)
        bad('a whole number from 1 to 5');
      return;
    case 'range':
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 10) bad('a number from 0 to 10');
      return;
    case 'legal-consent':
      if (value !== true) bad('true');
      return;
    // Lengths are checked before the patterns: a pattern's backtracking over a long string
    // (the email one is quadratic) would hold the process for seconds.
    case 'file-upload':
      if (typeof value !== 'string' || value.length > 2048 || !/^https?:\/\/\S+$/.test(value)) bad('a URL');
      return;
    case 'email-capture':
      // One address as the payload finds them (email-address.ts), so `email` is the one typed.
      if (typeof value !== 'string' || !isAddress(value)) bad('an email address');
      return;
    case 'date':
      if (typeof value !== 'string' || value.length > 128 || Number.isNaN(Date.parse(value))) bad('a date string');
      return;
    default:
      if (typeof value !== 'string' || value.length > 10000) bad('a string of at most 10000 characters');
  }
}

/** The most a submission's `metadata` or `participantMetadata` may hold, as JSON (stored once per submission: migration 017). */
export const MAX_METADATA_BYTES = 16_384;

/**
 * The length of a number as PostgreSQL prints it from jsonb: in plain decimal, never with an
 * exponent, so `5e-324` comes back as 326 characters and `1e300` as 301.
 */
export function plainDecimalLength(n: number): number {
  const s = String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s.length;
  const digits = 1 + (m[3]?.length ?? 0);
  const exp = Number(m[4]);
  return m[1]!.length + (exp > 0 ? Math.max(digits, exp + 1) : 2 + (-exp - 1) + digits);
}

/**
 * The bytes of `value` as JSON as storage hands it back: a limit measured on the JSON as sent
 * would let a few bytes of exponent stand for hundreds read back with every answer row.
 */
export function storedJsonBytes(value: unknown): number {
  const plain = JSON.stringify(value) ?? '';
  // JavaScript writes a number with an exponent as `1e+21` or `5e-324`: without one, the JSON
  // as sent is the JSON as stored, and no second pass is needed (the submission path).
  if (!/\de[+-]/.test(plain)) return Buffer.byteLength(plain);
  let extra = 0;
  const json = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'number' && Number.isFinite(v)) extra += plainDecimalLength(v) - String(v).length;
    return v;
  });
  return Buffer.byteLength(json ?? '') + extra;
}

/**
 * The limits of one submission beyond each answer's value: each slide answered once (its
 * answers are stored side by side), and metadata of at most MAX_METADATA_BYTES as JSON.
 */
export function checkSubmissionLimits(input: {
  answers: readonly { slideId: string }[];
  metadata?: Record<string, unknown>;
  participantMetadata?: Record<string, unknown>;
}): void {
  const seen = new Set<string>();
  input.answers.forEach((a, i) => {
    if (seen.has(a.slideId))
      throw invalid(`/answers/${i}/slideId`, `slide ${a.slideId} is answered twice in this submission`);
    seen.add(a.slideId);
  });
  for (const key of ['metadata', 'participantMetadata'] as const) {
    const value = input[key];
    if (value !== undefined && storedJsonBytes(value) > MAX_METADATA_BYTES)
      throw invalid(
        `/${key}`,
        `is larger than ${MAX_METADATA_BYTES} bytes as JSON (numbers counted in plain decimal, as stored)`,
      );
  }
}

/**
 * A respondent's stored participantMetadata with a submission's merged in may hold at most
 * MAX_METADATA_BYTES as JSON, unless it does not grow (409 limit_reached).
 */
export function checkMergedMetadata(stored: Record<string, unknown>, sent: Record<string, unknown>): void {
  const before = storedJsonBytes(stored);
  const after = storedJsonBytes({ ...stored, ...sent });
  if (after > MAX_METADATA_BYTES && after > before)
    throw new DomainError(
      'limit_reached',
      `a participant's metadata holds at most ${MAX_METADATA_BYTES} bytes as JSON`,
      [
        {
          path: '/participantMetadata',
          message: `would make ${after} bytes with what is stored, of at most ${MAX_METADATA_BYTES}`,
        },
      ],
    );
}

/**
 * The answers a respondent may store in one poll: every submission reads all of them back. Five
 * answers to each of a poll's 200 slides; a submission that would pass it is refused whole.
 */
export const MAX_ANSWERS_PER_RESPONDENT = 1_000;

export const answersCapped = (stored: number, submitted: number) =>
  new DomainError(
    'limit_reached',
    `this participant has stored ${stored} answers to this poll and may store ${MAX_ANSWERS_PER_RESPONDENT} at most: ` +
      `${submitted} more do not fit`,
  );

/**
 * What a respondent's stored answers to one poll may hold in all, as JSON: each answer's value
 * and each submission's metadata. Every later submission, batch flush and GET /emails reads them
 * back whole (a `complete` payload carries them all), so what a group of submissions or a flush
 * holds in memory is bounded by it; a submission that would pass it is refused whole.
 */
export const MAX_RESPONDENT_BYTES = 1_048_576;

/**
 * What answers hold in those bytes, stored or about to be: each value, and each metadata object
 * once (a submission's answers share one, stored once: migration 017; none without an answer).
 */
export function storedBytes(answers: readonly { value: unknown; metadata: Record<string, unknown> }[]): number {
  const metadata = new Set(answers.map((a) => a.metadata).filter((m) => Object.keys(m).length));
  let n = 0;
  for (const a of answers) n += storedJsonBytes(a.value);
  for (const m of metadata) n += storedJsonBytes(m);
  return n;
}

export const respondentBytesCapped = (submitted: number, stored: number | null) =>
  new DomainError(
    'limit_reached',
    `this participant's answers to this poll may hold ${MAX_RESPONDENT_BYTES} bytes as JSON in all (values and ` +
      `metadata): the ${submitted} bytes of this submission do not fit` +
      (stored === null ? '' : ` beside the ${stored} stored`),
  );
