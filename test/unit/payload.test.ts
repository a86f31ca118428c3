import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { checkAnswerValue } from '../../src/domain/answer.js';
import {
  buildPayload,
  extractEmails,
  MAX_EMAILS,
  withoutAddresses,
  type AnswerForPayload,
} from '../../src/domain/payload.js';
import type { Slide, SlideType } from '../../src/domain/slide.js';

const AT = new Date('2026-01-01T12:34:56.789Z');

describe('extractEmails', () => {
  it('keeps the order answers → participant metadata → response metadata', () => {
    const emails = extractEmails(
      [{ value: 'a@example.com' }, { value: 'b@example.com' }],
      { email: 'p@example.org' },
      { contact: 'r@example.net' },
    );
    expect(emails).toEqual(['a@example.com', 'b@example.com', 'p@example.org', 'r@example.net']);
  });

  it('puts an answer first even when metadata lists its addresses “earlier”', () => {
    expect(extractEmails([{ value: 'answer@example.com' }], { a: 'pm@example.com' }, { a: 'rm@example.com' })[0]).toBe(
      'answer@example.com',
    );
    expect(extractEmails([], { a: 'pm@example.com' }, { a: 'rm@example.com' })).toEqual([
      'pm@example.com',
      'rm@example.com',
    ]);
    expect(extractEmails([], {}, { a: 'rm@example.com' })).toEqual(['rm@example.com']);
  });

  it('lowercases and deduplicates, keeping the first occurrence’s place', () => {
    const emails = extractEmails(
      [{ value: 'Ann@Example.COM' }, { value: 'bob@example.com' }],
      { email: 'ann@example.com', other: 'BOB@example.com' },
      { x: 'ANN@EXAMPLE.COM', y: 'cy@example.com' },
    );
    expect(emails).toEqual(['ann@example.com', 'bob@example.com', 'cy@example.com']);
  });

  it('finds addresses inside longer text, arrays and nested objects', () => {
    const emails = extractEmails(
      [
        { value: 'write to me at first@example.com or second@example.co.uk, thanks' },
        { value: ['x', 'in-array@example.com'] },
      ],
      { profile: { contacts: [{ work: 'nested@example.org' }] } },
      {},
    );
    expect(emails).toEqual(['first@example.com', 'second@example.co.uk', 'in-array@example.com', 'nested@example.org']);
  });

  it('ignores values that hold no address and non-string scalars', () => {
    expect(
      extractEmails(
        [{ value: 5 }, { value: true }, { value: null }, { value: 'no address here' }, { value: 'not@an-address' }],
        { n: 1 },
        undefined,
      ),
    ).toEqual([]);
  });

  it('returns [] when nothing is given', () => {
    expect(extractEmails([], {}, {})).toEqual([]);
    expect(extractEmails([], undefined, undefined)).toEqual([]);
  });

  it('finds what a global search for the address pattern finds, in any text', () => {
    // The pattern searched from every position: the reference for which addresses a text holds.
    // A character of an address in running text: ASCII, or a letter, mark or digit of a script
    // written with spaces between words (by Script_Extensions), not a variation selector.
    const unspaced = ['Han', 'Hiragana', 'Katakana', 'Hangul', 'Thai', 'Lao', 'Khmer', 'Myanmar', 'Tibetan']
      .map((x) => `\\p{scx=${x}}`)
      .join('');
    const isUnspaced = new RegExp(`[${unspaced}]`, 'u');
    const c = `(?:[A-Za-z0-9]|(?![\\0-\\x7f${unspaced}\\p{Variation_Selector}])[\\p{L}\\p{M}\\p{N}])`;
    const label = `${c}(?:(?:${c}|-){0,61}${c})?`;
    const inText = new RegExp(`(?:[.!#$%&'*+/=?^_\`{|}~-]|${c})+@${label}(?:\\.${label})+`, 'gu');
    const w = '[A-Za-z0-9\\p{L}\\p{M}\\p{N}]';
    const whole = new RegExp(
      `^[.!#$%&'*+/=?^_\`{|}~\\-\\p{L}\\p{M}\\p{N}A-Za-z0-9]+@${w}(?:[${w.slice(1, -1)}-]{0,61}${w})?(?:\\.${w}(?:[${w.slice(1, -1)}-]{0,61}${w})?)+$`,
      'u',
    );
    const isWhole = (text: string) =>
      text.length <= 254 &&
      text.toLowerCase().length <= 254 &&
      whole.test(text) &&
      text.split(/[@.]/).every((p) => !(isUnspaced.test(p) && /[A-Za-z0-9]/.test(p)));
    // A match whose domain goes on in such a script (`.中国`) is no address.
    const goesOn = (text: string, end: number) =>
      text[end] === '.' && isUnspaced.test(String.fromCodePoint(text.codePointAt(end + 1) ?? 0));
    const reference = (text: string) =>
      isWhole(text)
        ? [text.toLowerCase()]
        : [
            ...new Set(
              [...text.matchAll(inText)]
                .filter((m) => !goesOn(text, m.index + m[0].length))
                .map((m) => m[0].toLowerCase())
                .filter((x) => x.length <= 254),
            ),
          ];
    // Seeded, so a failure names a text that can be tried again.
    let seed = 20261128;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    // Characters and pieces, long labels among them (a label holds at most 63 characters).
    const pieces = [
      ...'aZ09.-@@@ _!+é,ö"«»',
      '\u0301', // a combining mark
      '😀', // a surrogate pair, not a letter
      '𝒜', // a surrogate pair, a letter
      '例子',
      'まで',
      '으로',
      'ครับ',
      'ー',
      '.中国',
      'İ',
      'x.co',
      'b'.repeat(61),
      'c'.repeat(62),
      'd'.repeat(63),
      'e'.repeat(64),
      '-a',
      'a-',
    ];
    for (let i = 0; i < 5_000; i++) {
      const text = Array.from({ length: next() % 40 }, () => pieces[next() % pieces.length]).join('');
      expect(extractEmails([{ value: text }], {}, {}), JSON.stringify(text)).toEqual(reference(text));
    }
    for (const text of [
      'a@b.c@d.e',
      'x.@-y.z',
      'a@b.cc.',
      '@@a@b.c',
      'a@b-.c d@e.f',
      `${'a'.repeat(70)}@${'b'.repeat(70)}.c`,
    ])
      expect(extractEmails([{ value: text }], {}, {}), text).toEqual(reference(text));
  });

  it('reads a megabyte-long value with no address, or with many near misses, in one pass', () => {
    // Searched from every position, each of these costs the square of its length: hours, not
    // the moment it takes here.
    const mib = 1024 * 1024;
    expect(extractEmails([{ value: 'a'.repeat(mib) }], {}, {})).toEqual([]);
    expect(extractEmails([], { k: `a@${'.'.repeat(mib)}@` }, {})).toEqual([]);
    expect(extractEmails([], {}, { k: 'a@'.repeat(mib / 2) })).toEqual([]);
    // Longer than an address may be (254 characters): none.
    expect(extractEmails([{ value: `${'x'.repeat(mib)}@example.com` }], {}, {})).toEqual([]);
  });

  it('takes internationalised addresses whole, never a piece cut out of one', () => {
    const text = 'jörg@example.com, Zoë.Ng@Example.com; mañana@exämple.es «сергей@пример.рф» 𝒜b@x.org';
    expect(extractEmails([{ value: text }], {}, {})).toEqual([
      'jörg@example.com',
      'zoë.ng@example.com',
      'mañana@exämple.es',
      'сергей@пример.рф',
      '𝒜b@x.org',
    ]);
    // Punctuation of other scripts ends an address as ASCII punctuation does.
    expect(extractEmails([{ value: '“ann@example.com”' }], {}, {})).toEqual(['ann@example.com']);
  });

  it('in running text of a script written without spaces, takes the address and not its neighbours', () => {
    for (const [text, found] of [
      ['请发邮件到ann@example.com谢谢', 'ann@example.com'],
      ['ann@example.com으로 보내주세요', 'ann@example.com'],
      ['info@example.comまで', 'info@example.com'],
      ['ติดต่อbob@example.orgครับ', 'bob@example.org'],
    ])
      expect(extractEmails([{ value: text }], {}, {}), text).toEqual([found]);
    // Signs and marks such scripts share with others border an address too.
    for (const text of [
      'サーバーadmin@example.com',
      'フ\u3099ロク\u3099admin@example.com',
      '葛\u{E0100}admin@example.com',
      'ｻｰﾊﾞｰadmin@example.com',
    ])
      expect(extractEmails([{ value: text }], {}, {}), text).toEqual(['admin@example.com']);
    // Inside a sentence, one whose domain goes on in such a script is not cut short into another.
    expect(extractEmails([{ value: 'email ann@mail.example.公司 now, or ann@example.com.中国 ok' }], {}, {})).toEqual(
      [],
    );
    // An address in such a script is found as a whole value, not inside a sentence.
    expect(extractEmails([{ value: 'bob@例子.公司' }], { contact: '李@例子.公司' }, {})).toEqual([
      'bob@例子.公司',
      '李@例子.公司',
    ]);
  });

  it('finds addresses as deep as a request may nest them', () => {
    let deep: unknown = 'deep@example.com';
    for (let i = 0; i < 30; i++) deep = { k: deep };
    expect(extractEmails([], deep, {})).toEqual(['deep@example.com']);
  });

  it('keeps no address that lower-cases past 254 characters', () => {
    const grows = `${'İ'.repeat(90)}@${'e'.repeat(60)}.${'f'.repeat(60)}.io`; // İ lower-cases to two units
    expect(grows.length).toBeLessThanOrEqual(254);
    expect(grows.toLowerCase().length).toBeGreaterThan(254);
    expect(extractEmails([{ value: grows }, { value: `x ${grows} y` }], {}, {})).toEqual([]);
  });

  it(`keeps the first ${MAX_EMAILS} addresses, and none longer than 254 characters`, () => {
    const many = Array.from({ length: 150 }, (_, i) => `a${i}@example.com`);
    const emails = extractEmails([{ value: many.slice(0, 60).join(' ') }], { m: many.slice(60).join(' ') }, {});
    expect(emails).toEqual(many.slice(0, MAX_EMAILS));
    const longest = `${'l'.repeat(64)}@${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(58)}.io`;
    expect(longest).toHaveLength(254);
    expect(extractEmails([{ value: `${longest} x${longest}` }], {}, {})).toEqual([longest]);
  });
});

describe('an email-capture answer', () => {
  const slide = { id: 'sld_1', type: 'email-capture', answers: [] } as unknown as Slide;
  it('is one address as the payload finds them, internationalised ones included', () => {
    for (const ok of ['ann@example.com', 'jörg@exämple.de', 'bob@例子.公司', '李@例子.公司', 'a+tag@sub.example.co.uk'])
      expect(() => checkAnswerValue(slide, ok, '/answers/0/value'), ok).not.toThrow();
    for (const bad of [
      '请发邮件到ann@example.com谢谢',
      'a"b@example.com',
      'ann@example',
      'ann@-x.com',
      ' ann@example.com',
      'a@b.c d@e.f',
      'x'.repeat(250) + '@e.co',
    ])
      expect(() => checkAnswerValue(slide, bad, '/answers/0/value'), bad).toThrow(/an email address/);
  });
});

const answers: AnswerForPayload[] = [
  {
    slideId: 'sld_a',
    title: 'What brought you here?',
    type: 'short-answer',
    value: 'A friend',
    createdAt: new Date('2026-01-01T12:34:50.000Z'),
  },
  {
    slideId: 'sld_b',
    title: 'Your email?',
    type: 'email-capture',
    value: 'Ann@Example.com',
    createdAt: new Date('2026-01-01T12:34:55.000Z'),
  },
];

const base = {
  type: 'submitted-responses' as const,
  accountId: 'acc_1',
  pollId: 'poll_1',
  participantId: 'prt_1',
  anonymous: false,
  participantMetadata: { email: 'ann.work@example.org', plan: 'gold' },
  responseMetadata: [{ page: '/checkout', ref: 'ads@example.net' }],
  answers,
  complete: false,
  at: AT,
};

describe('buildPayload', () => {
  it('has exactly the documented payload fields', () => {
    const p = buildPayload(base);
    expect(Object.keys(p).sort()).toEqual(
      [
        'accountId',
        'email',
        'emails',
        'metadata',
        'participantId',
        'pollId',
        'responses',
        'submissionsComplete',
        'timestamp',
        'type',
      ].sort(),
    );
  });

  it('fills every field', () => {
    expect(buildPayload(base)).toEqual({
      type: 'submitted-responses',
      accountId: 'acc_1',
      pollId: 'poll_1',
      participantId: 'prt_1',
      metadata: { page: '/checkout', ref: 'ads@example.net' },
      responses: {
        sld_a: {
          slideId: 'sld_a',
          title: 'What brought you here?',
          type: 'short-answer',
          value: 'A friend',
          createdAt: '2026-01-01T12:34:50.000Z',
        },
        sld_b: {
          slideId: 'sld_b',
          title: 'Your email?',
          type: 'email-capture',
          value: 'Ann@Example.com',
          createdAt: '2026-01-01T12:34:55.000Z',
        },
      },
      submissionsComplete: false,
      timestamp: AT.getTime(),
      email: 'ann@example.com',
      emails: ['ann@example.com', 'ann.work@example.org', 'ads@example.net'],
    });
  });

  it('timestamp is an integer of milliseconds since the epoch, and survives JSON', () => {
    const p = buildPayload(base);
    expect(Number.isInteger(p.timestamp)).toBe(true);
    expect(p.timestamp).toBe(Date.parse('2026-01-01T12:34:56.789Z'));
    const round = JSON.parse(JSON.stringify(p));
    expect(round).toEqual(p);
    expect(typeof round.timestamp).toBe('number');
  });

  it('carries completed-survey and submissionsComplete: true', () => {
    const p = buildPayload({ ...base, type: 'completed-survey', complete: true });
    expect(p.type).toBe('completed-survey');
    expect(p.submissionsComplete).toBe(true);
  });

  it('keys responses by slide id; answers of array / number / boolean kinds keep their JSON value', () => {
    const p = buildPayload({
      ...base,
      answers: [
        { slideId: 'sld_m', title: 'Pick', type: 'checkbox', value: ['Red', 'Blue'], createdAt: AT },
        { slideId: 'sld_s', title: 'Stars', type: 'star-rating', value: 4, createdAt: AT },
        { slideId: 'sld_l', title: 'Consent', type: 'legal-consent', value: true, createdAt: AT },
      ],
    });
    expect(Object.keys(p.responses)).toEqual(['sld_m', 'sld_s', 'sld_l']);
    expect(p.responses.sld_m!.value).toEqual(['Red', 'Blue']);
    expect(p.responses.sld_s!.value).toBe(4);
    expect(p.responses.sld_l!.value).toBe(true);
    expect(p.responses.sld_l!.createdAt).toBe(AT.toISOString());
  });

  it('with no answers: responses {} and only metadata addresses', () => {
    const p = buildPayload({ ...base, answers: [] });
    expect(p.responses).toEqual({});
    expect(p.emails).toEqual(['ann.work@example.org', 'ads@example.net']);
    expect(p.email).toBe('ann.work@example.org');
  });

  it("several submissions' metadata merge in order (later keys win), with the addresses of each", () => {
    const p = buildPayload({
      ...base,
      answers: [answers[0]!],
      participantMetadata: {},
      responseMetadata: [{ to: 'early@example.com', page: '/a' }, { page: '/b' }],
    });
    expect(p.metadata).toEqual({ to: 'early@example.com', page: '/b' });
    expect(p.emails).toEqual(['early@example.com']);
  });

  it('no address anywhere → email null and emails []', () => {
    const p = buildPayload({ ...base, answers: [answers[0]!], participantMetadata: {}, responseMetadata: [] });
    expect(p.email).toBeNull();
    expect(p.emails).toEqual([]);
  });

  it('anonymous mode → email null and emails [] whatever the answers and metadata hold', () => {
    const p = buildPayload({ ...base, anonymous: true });
    expect(p.email).toBeNull();
    expect(p.emails).toEqual([]);
    // The rest of the payload is unchanged.
    expect(p.responses.sld_b!.value).toBe('Ann@Example.com');
    expect(p.metadata).toEqual(base.responseMetadata[0]);
  });
});

function slide(type: SlideType, extra: Partial<Slide> = {}): Slide {
  return {
    id: `sld_${type.replace(/-/g, '')}`,
    pollId: 'poll_1',
    accountId: 'acc_1',
    idx: 0,
    type,
    title: `A ${type} slide`,
    subtitle: null,
    answers: [],
    multi: false,
    logic: [],
    createdAt: AT,
    updatedAt: AT,
    ...extra,
  };
}

const choices = (...titles: string[]) => titles.map((title, i) => ({ id: `ans_${i}`, title }));

/** The DomainError that fn throws, or a failure when it throws none. */
function thrown(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a DomainError, nothing was thrown');
}

type Case = [name: string, slide: Slide, good: unknown[], bad: unknown[]];

const CASES: Case[] = [
  [
    'question',
    slide('question', { answers: choices('Red', 'Blue') }),
    ['Red', 'Blue'],
    ['Green', 'red', ['Red'], 1, null, true, {}],
  ],
  [
    'question (multi)',
    slide('question', { answers: choices('Red', 'Blue'), multi: true }),
    [['Red'], ['Red', 'Blue']],
    ['Red', [], ['Green'], ['Red', 1], [null]],
  ],
  [
    'checkbox',
    slide('checkbox', { answers: choices('A', 'B', 'C'), multi: true }),
    [['A'], ['B', 'C']],
    ['A', [], ['D'], 5],
  ],
  ['dropdown', slide('dropdown', { answers: choices('One', 'Two') }), ['One', 'Two'], ['Three', ['One'], 1, '']],
  ['binary (default Yes/No)', slide('binary'), ['Yes', 'No'], ['Maybe', true, false, 'yes', 1]],
  [
    'binary (own answers)',
    slide('binary', { answers: choices('Agree', 'Disagree') }),
    ['Agree', 'Disagree'],
    ['Yes', 'No'],
  ],
  ['star-rating', slide('star-rating'), [1, 3, 5], [0, 6, 2.5, '4', null, [4]]],
  ['range', slide('range'), [0, 5, 7.5, 10], [-1, 11, '5', NaN, Infinity, null]],
  [
    'short-answer',
    slide('short-answer'),
    ['A friend', '', 'x'.repeat(10_000)],
    [5, true, null, ['a'], { a: 1 }, 'x'.repeat(10_001)],
  ],
  ['long-answer', slide('long-answer'), ['Many\nlines\nof text'], [1, false, ['text']]],
  [
    'email-capture',
    slide('email-capture'),
    ['ann@example.com', 'Ann.B+tag@Example.co.uk'],
    // The last two: over 320 characters, and a megabyte whose pattern check alone (quadratic
    // in its length) would hold the process for hours; both refused at once.
    [
      'ann',
      'ann@',
      '@example.com',
      'ann @example.com',
      5,
      null,
      `${'a'.repeat(309)}@example.com`,
      `a@${'.'.repeat(1024 * 1024)}@`,
    ],
  ],
  ['phone-capture', slide('phone-capture'), ['+1 555 0100', '0101'], [15550100, null, ['+1']]],
  // Accepted: what String(new Date()) gives, 66 characters with its zone's name. Refused, the
  // last: a string Date.parse takes (it skips a parenthesised comment), over 128 characters.
  [
    'date',
    slide('date'),
    ['2026-01-01', '2026-01-01T10:00:00Z', 'Thu Jan 01 2026 10:00:00 GMT+0100 (Central European Standard Time)'],
    ['not a date', 20260101, null, `Jan 1 2026 (${'x'.repeat(200)})`],
  ],
  [
    'file-upload',
    slide('file-upload'),
    ['https://files.example.com/a.pdf', 'http://cdn.example.com/x.png'],
    ['files.example.com/a.pdf', 'ftp://example.com/a', 'https://', 5, null, `https://example.com/${'a'.repeat(2029)}`],
  ],
  ['legal-consent', slide('legal-consent'), [true], [false, 'true', 1, 'yes', null]],
];

describe('checkAnswerValue', () => {
  it.each(CASES)('%s accepts values of its kind', (_name, s, good) => {
    for (const v of good) expect(() => checkAnswerValue(s, v, '/answers/0/value'), JSON.stringify(v)).not.toThrow();
  });

  it.each(CASES)(
    '%s refuses a value of the wrong kind with validation_failed naming the slide',
    (_name, s, _good, bad) => {
      for (const v of bad) {
        const e = thrown(() => checkAnswerValue(s, v, '/answers/3/value'));
        expect(e.code, JSON.stringify(v)).toBe('validation_failed');
        expect(e.message).toContain(s.id);
        expect(e.errors).toHaveLength(1);
        expect(e.errors![0]!.path).toBe('/answers/3/value');
        expect(e.errors![0]!.message).toContain(s.id);
      }
    },
  );

  it.each(['copy', 'thank-you'] as const)('%s takes no answer at all', (type) => {
    const s = slide(type);
    for (const v of ['text', true, 1, null]) {
      const e = thrown(() => checkAnswerValue(s, v, '/answers/0/value'));
      expect(e.code).toBe('validation_failed');
      expect(e.message).toContain(s.id);
    }
  });

  it('names the path it was given', () => {
    const e = thrown(() => checkAnswerValue(slide('star-rating'), 'five', '/answers/7/value'));
    expect(e.errors).toEqual([{ path: '/answers/7/value', message: expect.stringContaining('sld_starrating') }]);
  });
});

describe('withoutAddresses', () => {
  // Answers and metadata that look like the payload's own fields, inside strings and objects.
  const tricky = (anonymous: boolean) =>
    buildPayload({
      type: 'submitted-responses',
      accountId: 'acc_1',
      pollId: 'poll_1',
      participantId: 'par_1',
      anonymous,
      participantMetadata: { email: 'p@example.org', note: 'a "quoted" \\ back\\slash' },
      responseMetadata: [{ nested: { email: 'x@example.org', emails: ['y@example.org'] } }],
      answers: [
        {
          slideId: 's1',
          title: 'T',
          type: 'short-answer',
          value: '","email":null,"emails":[]} ann@example.com',
          createdAt: AT,
        },
        { slideId: 's2', title: 'E', type: 'email-capture', value: 'bob+"x"@example.com', createdAt: AT },
      ],
      complete: false,
      at: AT,
    });

  it('turns a payload into the bytes an anonymous poll sends, whatever its answers hold', () => {
    const named = JSON.stringify(tricky(false));
    expect(JSON.parse(named).emails.length).toBeGreaterThan(2);
    expect(withoutAddresses(named)).toBe(JSON.stringify(tricky(true)));
  });

  it('leaves one with no address as it is', () => {
    const body = JSON.stringify(tricky(true));
    expect(withoutAddresses(body)).toBe(body);
  });
});
