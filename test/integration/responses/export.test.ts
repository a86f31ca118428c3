import { describe, expect, it } from 'vitest';
import { answer, visiblePoll } from '../../support/fixtures.js';
import { acme, call, expectProblem, h, rival, slide, useResponsesApi } from '../../support/responses-api.js';

/**
 * Route tests for the CSV export, GET /responses/export (src/app/responses/export-responses.ts):
 * RFC 4180 quoting, formula-leading cells neutralised, JSON for multi-choice and numeric values,
 * streamed in order past one page.
 */

useResponsesApi();

/** A minimal RFC 4180 parser: quoted fields, doubled quotes, CRLF or LF row ends. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      /* the \n ends the row */
    } else if (c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

describe('GET /responses/export', () => {
  const HEADER = [
    'responseId',
    'participantId',
    'slideId',
    'slideTitle',
    'slideType',
    'value',
    'synthetic',
    'createdAt',
  ];

  it('answers text/csv with a header row and one row per answer', async () => {
    const poll = await visiblePoll(h, acme);
    h.clock.advance(1_000);
    const at = h.clock.now().toISOString();
    const a = await answer(h, {
      pollId: poll.pollId,
      participantId: 'csv-1',
      answers: [
        { slideId: poll.q1, value: 'plain' },
        { slideId: poll.q2, value: 'c@example.com' },
      ],
    });
    h.clock.advance(1_000);
    const b = await answer(h, {
      pollId: poll.pollId,
      participantId: 'csv-2',
      answers: [{ slideId: poll.q1, value: 'second' }],
    });
    const res = await call('GET', `/responses/export?pollId=${poll.pollId}`, acme.key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toContain('attachment');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.split('\r\n')[0]).toBe(HEADER.join(','));
    const rows = parseCsv(res.body);
    expect(rows[0]).toEqual(HEADER);
    expect(rows).toHaveLength(4);
    // Time order between submissions; the answers of one submission share a millisecond.
    expect(
      rows
        .slice(1, 3)
        .map((r) => r[0])
        .sort(),
    ).toEqual([...a.responseIds].sort());
    expect(rows[3]![0]).toBe(b.responseIds[0]);
    const byId = new Map(rows.slice(1).map((r) => [r[0], r]));
    expect(byId.get(a.responseIds[0]!)).toEqual([
      a.responseIds[0],
      'csv-1',
      poll.q1,
      'What brought you here?',
      'short-answer',
      'plain',
      'false',
      at,
    ]);
    expect(byId.get(a.responseIds[1]!)).toEqual([
      a.responseIds[1],
      'csv-1',
      poll.q2,
      'Your email?',
      'email-capture',
      'c@example.com',
      'false',
      at,
    ]);
    expect(byId.get(b.responseIds[0]!)!.slice(1, 6)).toEqual([
      'csv-2',
      poll.q1,
      'What brought you here?',
      'short-answer',
      'second',
    ]);
  });

  it('a poll with no responses → just the header row', async () => {
    const poll = await visiblePoll(h, acme);
    const res = await call('GET', `/responses/export?pollId=${poll.pollId}`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(parseCsv(res.body)).toEqual([HEADER]);
  });

  it('escapes commas, quotes and newlines; neutralises formula-leading cells', async () => {
    const poll = await visiblePoll(h, acme);
    const values = [
      'a, b and c',
      'she said "hi"',
      'line one\nline two',
      'cr\r\nlf',
      '=HYPERLINK("https://evil.example","click")',
      '+1 555 0100',
      '-2+3',
      '@SUM(A1:A2)',
      '\t=1+1',
      '=1,"2"\n3',
      'x;=1+1;y',
      'a\t=1+1',
    ];
    const ids: string[] = [];
    for (const value of values) {
      h.clock.advance(1);
      ids.push(...(await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value }] })).responseIds);
    }
    h.clock.advance(1);
    await answer(h, {
      pollId: poll.pollId,
      participantId: '=cmd|"/c calc"!A1',
      answers: [{ slideId: poll.q1, value: 'ok' }],
    });

    const res = await call('GET', `/responses/export?pollId=${poll.pollId}`, acme.key);
    expect(res.statusCode).toBe(200);
    const rows = parseCsv(res.body);
    expect(rows).toHaveLength(1 + values.length + 1);
    for (const r of rows) expect(r).toHaveLength(HEADER.length);
    const got = rows.slice(1, 1 + values.length).map((r) => r[5]);
    expect(got).toEqual([
      'a, b and c',
      'she said "hi"',
      'line one\nline two',
      'cr\r\nlf',
      `'=HYPERLINK("https://evil.example","click")`,
      `'+1 555 0100`,
      `'-2+3`,
      `'@SUM(A1:A2)`,
      `'\t=1+1`,
      `'=1,"2"\n3`,
      'x;=1+1;y',
      'a\t=1+1',
    ]);
    // Quoted, so that a spreadsheet splitting on ; or tab keeps the cell whole.
    expect(res.body).toContain('"x;=1+1;y"');
    expect(res.body).toContain('"a\t=1+1"');
    // No cell of the file starts with a formula character.
    for (const r of rows) for (const cell of r) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    expect(rows.at(-1)![1]).toBe(`'=cmd|"/c calc"!A1`);
  });

  it('holds the answers created in createdAfter..createdBefore; a swapped or malformed window is a 400', async () => {
    const poll = await visiblePoll(h, acme);
    const at = (value: string) => answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value }] });
    h.clock.advance(1_000);
    await at('early');
    h.clock.advance(1_000);
    const after = h.clock.now().toISOString();
    h.clock.advance(1);
    await at('inside');
    h.clock.advance(1_000);
    const before = h.clock.now().toISOString();
    await at('late');
    const url = `/responses/export?pollId=${poll.pollId}`;
    const values = async (query: string) => {
      const res = await call('GET', `${url}${query}`, acme.key);
      expect(res.statusCode, res.body).toBe(200);
      return parseCsv(res.body)
        .slice(1)
        .map((r) => r[5]);
    };
    expect(await values('')).toEqual(['early', 'inside', 'late']);
    expect(await values(`&createdAfter=${after}&createdBefore=${before}`)).toEqual(['inside']);
    expect(await values(`&createdBefore=${before}`)).toEqual(['early', 'inside']);
    expect(await values(`&createdAfter=${after}`)).toEqual(['inside', 'late']);
    const swapped = expectProblem(
      await call('GET', `${url}&createdAfter=${before}&createdBefore=${after}`, acme.key),
      400,
      'validation_failed',
    );
    expect(JSON.stringify(swapped)).toContain('createdBefore');
    expectProblem(await call('GET', `${url}&createdBefore=yesterday`, acme.key), 400, 'validation_failed');
  });

  it('starts with a UTF-8 byte order mark only when asked (bom=true), for spreadsheets opened from disk', async () => {
    const poll = await visiblePoll(h, acme);
    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'Zoë' }] });
    const plain = await call('GET', `/responses/export?pollId=${poll.pollId}`, acme.key);
    expect(plain.rawPayload.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]))).toBe(false);
    const marked = await call('GET', `/responses/export?pollId=${poll.pollId}&bom=true`, acme.key);
    expect(marked.statusCode).toBe(200);
    expect(marked.rawPayload.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]))).toBe(true);
    expect(marked.body.slice(1)).toBe(plain.body);
    expectProblem(
      await call('GET', `/responses/export?pollId=${poll.pollId}&bom=maybe`, acme.key),
      400,
      'validation_failed',
    );
  });

  it('multi-choice and numeric values are written as JSON', async () => {
    const poll = await visiblePoll(h, acme);
    const pick = await slide(poll.pollId, {
      type: 'checkbox',
      title: 'Colours, please',
      answers: [{ title: 'Red' }, { title: 'Blue' }],
      multi: true,
    });
    const stars = await slide(poll.pollId, { type: 'star-rating', title: 'Stars' });
    await answer(h, {
      pollId: poll.pollId,
      answers: [
        { slideId: pick, value: ['Red', 'Blue'] },
        { slideId: stars, value: 5 },
      ],
    });
    const rows = parseCsv((await call('GET', `/responses/export?pollId=${poll.pollId}`, acme.key)).body);
    const bySlide = new Map(rows.slice(1).map((r) => [r[2], r]));
    expect(bySlide.get(pick)!.slice(3, 6)).toEqual(['Colours, please', 'checkbox', '["Red","Blue"]']);
    expect(bySlide.get(stars)!.slice(4, 6)).toEqual(['star-rating', '5']);
  });

  it('another account’s poll → 404 problem document, as for a missing one', async () => {
    const poll = await visiblePoll(h, acme);
    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'secret answer' }] });
    const theirs = expectProblem(
      await call('GET', `/responses/export?pollId=${poll.pollId}`, rival.key),
      404,
      'not_found',
    );
    expect(JSON.stringify(theirs)).not.toContain('secret answer');
    const missing = expectProblem(
      await call('GET', '/responses/export?pollId=poll_0000000000000000000000', rival.key),
      404,
      'not_found',
    );
    expect(theirs.detail).toBe(missing.detail);
    expectProblem(await call('GET', `/responses/export?pollId=${poll.pollId}`, undefined), 401, 'unauthenticated');
    expectProblem(await call('GET', '/responses/export', acme.key), 400, 'validation_failed');
  });

  it('streams a poll with more rows than one page (100) in order', async () => {
    const poll = await visiblePoll(h, acme);
    const ids: string[] = [];
    // 300 respondents who answer both slides (a submission answers each slide once).
    for (let i = 0; i < 300; i++) {
      const answers = [
        { slideId: poll.q1, value: `v${i}` },
        { slideId: poll.q2, value: `r${i}@example.com` },
      ];
      ids.push(...(await answer(h, { pollId: poll.pollId, answers })).responseIds);
    }
    const rows = parseCsv((await call('GET', `/responses/export?pollId=${poll.pollId}`, acme.key)).body);
    expect(rows).toHaveLength(601);
    expect(rows.slice(1).map((r) => r[0])).toEqual([...ids].sort());
  });
});
