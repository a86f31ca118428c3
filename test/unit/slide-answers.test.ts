import { describe, expect, it } from 'vitest';
import { cleanAnswers } from '../../src/app/polls/slide-checks.js';

describe('cleanAnswers', () => {
  it('strips HTML from a new title, and keeps a title sent as it is stored', () => {
    expect(cleanAnswers([{ id: 'a', title: 'A<B' }], 0).map((a) => a.title)).toEqual(['AB']);
    // A stored title with a `<` is kept as sent: answers given and logic naming it keep matching.
    const stored = [{ id: 'a', title: 'A<B' }];
    expect(cleanAnswers([{ id: 'a', title: ' A<B ' }, { title: '<i>C</i>' }], 0, stored).map((a) => a.title)).toEqual([
      'A<B',
      'C',
    ]);
  });
});
