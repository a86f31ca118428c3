import { NON_ANSWERABLE, type Slide } from './slide.js';

/** mulberry32: small, fast, and the same sequence for the same seed on every platform. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['great', 'fast', 'clear', 'slow', 'helpful', 'confusing', 'friendly', 'expensive', 'easy', 'reliable'];

/** One plausible answer for a slide, in the value shape a respondent would send (checkAnswerValue accepts it). */
export function syntheticAnswer(slide: Slide, rand: () => number, n: number): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const titles = slide.answers.map((a) => a.title);
  switch (slide.type) {
    case 'question':
    case 'checkbox':
    case 'dropdown':
    case 'binary': {
      const options = titles.length ? titles : slide.type === 'binary' ? ['Yes', 'No'] : ['Option'];
      if (slide.multi) {
        const chosen = options.filter(() => rand() < 0.5);
        return chosen.length ? chosen : [pick(options)];
      }
      return pick(options);
    }
    case 'star-rating':
      return 1 + Math.floor(rand() * 5);
    case 'range':
      return Math.floor(rand() * 11);
    case 'short-answer':
      return `${pick(WORDS)} and ${pick(WORDS)}`;
    case 'long-answer':
      return `It was ${pick(WORDS)}, mostly ${pick(WORDS)}, sometimes ${pick(WORDS)}.`;
    case 'email-capture':
      return `synthetic-${n}@example.com`;
    case 'phone-capture':
      return `+1555${String(1000000 + Math.floor(rand() * 8999999))}`;
    case 'date':
      return new Date(Date.UTC(2020 + Math.floor(rand() * 6), Math.floor(rand() * 12), 1 + Math.floor(rand() * 28)))
        .toISOString()
        .slice(0, 10);
    case 'file-upload':
      return `https://example.com/uploads/synthetic-${n}.pdf`;
    case 'legal-consent':
      return true;
    default:
      return null;
  }
}

export function answerableSlides(slides: readonly Slide[]): Slide[] {
  return slides.filter((s) => !NON_ANSWERABLE.has(s.type));
}

export type ResearchRun = {
  id: string;
  pollId: string;
  accountId: string;
  participants: number;
  seed: number;
  responsesCreated: number;
  createdAt: Date;
};
