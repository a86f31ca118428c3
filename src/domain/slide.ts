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
