import { DomainError } from './errors.js';
import type { QuestionRule } from './logic.js';
import { POS_RULES } from './poll-defaults.js';

export const SLIDE_TYPES = [
  'question',
  'checkbox',
  'dropdown',
  'binary',
  'star-rating',
  'range',
  'short-answer',
  'long-answer',
  'email-capture',
  'phone-capture',
  'date',
  'file-upload',
  'legal-consent',
  'copy',
  'thank-you',
] as const;
export type SlideType = (typeof SLIDE_TYPES)[number];

/** The most slides a poll may hold: every submission reads all of them. */
export const MAX_SLIDES = 200;

/**
 * The most a poll's slides may hold, as stored JSON: every submission group reads all of them,
 * and a poll of 200 slides at the request schema's sizes (about 26 MB) took 280 ms a submission
 * (docs/performance.md, "Reading the poll at each submission").
 */
export const MAX_POLL_SLIDE_BYTES = 1_048_576;

/** What a slide adds to its poll's stored bytes: its texts, answers and rules as JSON (UTF-8). */
export function slideBytes(s: Pick<Slide, 'type' | 'title' | 'subtitle' | 'answers' | 'multi' | 'logic'>): number {
  return Buffer.byteLength(JSON.stringify([s.type, s.title, s.subtitle, s.answers, s.multi, s.logic]));
}

/**
 * A poll's slides hold at most MAX_POLL_SLIDE_BYTES, unless a write does not grow them: a poll
 * saved larger may still be edited down (409 limit_reached).
 */
export function checkPollSlideBytes(slide: Slide, others: readonly Slide[], before: Slide | null): void {
  const rest = others.reduce((n, s) => n + slideBytes(s), 0);
  const after = rest + slideBytes(slide);
  if (after > MAX_POLL_SLIDE_BYTES && after > rest + (before ? slideBytes(before) : 0)) {
    throw new DomainError('limit_reached', `a poll's slides hold at most ${MAX_POLL_SLIDE_BYTES} bytes`, [
      { path: '/', message: `would make ${after} bytes of slides, of at most ${MAX_POLL_SLIDE_BYTES}` },
    ]);
  }
}

/** Slides that only show text and take no answer. */
export const NON_ANSWERABLE: ReadonlySet<SlideType> = new Set(['copy', 'thank-you']);
export const CHOICE_TYPES: ReadonlySet<SlideType> = new Set(['question', 'checkbox', 'dropdown', 'binary']);

export type SlideAnswer = { id: string; title: string };

export type Slide = {
  id: string;
  pollId: string;
  accountId: string;
  idx: number;
  type: SlideType;
  title: string;
  subtitle: string | null;
  answers: SlideAnswer[];
  multi: boolean;
  logic: QuestionRule[];
  createdAt: Date;
  updatedAt: Date;
};

export function isPosPoll(pageRules: readonly string[]): boolean {
  return pageRules.some((r) => POS_RULES.includes(r.trim()));
}

/** A poll for the point-of-sale surfaces (POS_RULES) cannot contain file-upload slides. */
export function checkPosRule(pageRules: readonly string[], slideTypes: readonly SlideType[]): void {
  if (isPosPoll(pageRules) && slideTypes.includes('file-upload')) {
    throw new DomainError(
      'pos_file_upload',
      'a point-of-sale poll (page rule /pos/post-purchase or /pos/home) cannot contain file-upload slides',
    );
  }
}
