import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mailer, OutgoingMail, Deps, Store } from '../../../src/app/ports/index.js';
import { checkAlerts, type SentAlert, type UnrecordedAlert } from '../../../src/app/alerts/check-alerts.js';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';

/**
 * Failure-alert emails are at-least-once (README "Guarantees"): the email is sent before it is
 * recorded, so a process that dies between the two sends it again later (after the hold that
 * keeps other schedulers off the endpoint meanwhile), and never loses it.
 */

const WINDOWS = { quietMs: 60_000, reminderMs: 600_000 };
// How long an endpoint stays held while its email is out (check-alerts.ts: 2 min, or the reminder period if shorter).
const SENDING_HOLD_MS = Math.min(120_000, WINDOWS.reminderMs);

let h: Harness;
let acct: TestAccount;
beforeAll(async () => {
  h = await harness();
  acct = await h.account();
});
afterAll(async () => {
  await h?.close();
});

const alertsOf = async (endpointId: string) =>
  (
    (await h.app.inject({ url: `/alerts?accountId=${acct.accountId}`, headers: bearer(acct.key) })).json().data as {
      endpointId: string;
      sequence: number;
    }[]
  ).filter((a) => a.endpointId === endpointId);

type Insert = Store['alerts']['insert'];
/** A harness's store, its alert emails recorded through `insert` (given the real one). */
const recordingWith = (
  insert: (a: Parameters<Insert>[0], real: Insert) => ReturnType<Insert>,
  of: Harness = h,
): Store => {
  const real = of.deps.store;
  return {
    ...real,
    transaction: (fn) =>
      real.transaction((tx) => fn({ ...tx, alerts: { ...tx.alerts, insert: (a) => insert(a, tx.alerts.insert) } })),
  };
};

describe('failure-alert emails across a crash between sending and recording', () => {
  it('the email goes out again after the hold, and is recorded once', async () => {
    const poll = await visiblePoll(h, acct);
    const hook = await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/alerts');
    const webhookId = hook.data.id;
    await h.deps.store.endpoints.recordGivenUp(webhookId, h.clock.now(), 'HTTP 500');
    h.clock.advance(WINDOWS.quietMs + 1);

    const sent: OutgoingMail[] = [];
    const mailer: Mailer = { send: async (m) => (sent.push(m), { refused: [] }), close: async () => {} };
    const deps: Deps = { ...h.deps, mailer, alerts: WINDOWS };
    // The process "dies" once the email has left: the transaction recording it never commits.
    const dying = recordingWith(async () => {
      throw new Error('killed after sending');
    });
    await expect(checkAlerts({ ...deps, store: dying })).rejects.toThrow('killed after sending');
    expect(sent).toHaveLength(1);
    const stored = async () =>
      (await h.app.inject({ url: `/alerts?accountId=${acct.accountId}`, headers: bearer(acct.key) })).json().data as {
        sequence: number;
        subject: string;
      }[];
    const health = async () =>
      (
        (await h.app.inject({ url: `/webhooks?pollId=${poll.pollId}`, headers: bearer(acct.key) })).json().data as {
          health: { state: string; alertEmailsSent: number };
        }[]
      )[0]!.health;
    expect(await stored()).toEqual([]);
    expect(await health()).toMatchObject({ state: 'healthy', alertEmailsSent: 0 });

    // Held while "in flight": another scheduler does not mail it at once...
    expect(await checkAlerts(deps)).toBe(0);
    expect(sent).toHaveLength(1);
    // ...but once the hold is over, the email goes out again (a repeat, not a loss) and is recorded.
    h.clock.advance(SENDING_HOLD_MS);
    expect(await checkAlerts(deps)).toBe(1);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.subject).toBe(sent[0]!.subject);
    expect(await stored()).toMatchObject([{ sequence: 1, subject: sent[0]!.subject }]);
    expect(await health()).toMatchObject({ state: 'alerted', alertEmailsSent: 1 });
    // And only once: nothing more until the reminder period.
    expect(await checkAlerts(deps)).toBe(0);
    expect(sent).toHaveLength(2);
  });
});

describe('a brief database error while the sent email is recorded', () => {
  it('is tried again while the endpoint is still held: the email is recorded once, never sent twice', async () => {
    const poll = await visiblePoll(h, acct);
    const hook = await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/blip');
    await h.deps.store.endpoints.recordGivenUp(hook.data.id, h.clock.now(), 'HTTP 500');
    h.clock.advance(WINDOWS.quietMs + 1);
    const sent: OutgoingMail[] = [];
    const mailer: Mailer = { send: async (m) => (sent.push(m), { refused: [] }), close: async () => {} };
    // The first transaction recording it fails as a dropped connection would; the next ones work.
    let failures = 1;
    const blip = recordingWith(async (a, insert) => {
      if (failures-- > 0) throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '08006' });
      return insert(a);
    });
    const deps: Deps = { ...h.deps, store: blip, mailer, alerts: WINDOWS };
    expect(await checkAlerts(deps)).toBe(1);
    h.clock.advance(SENDING_HOLD_MS);
    expect(await checkAlerts(deps)).toBe(0);
    expect(sent).toHaveLength(1);
    const alerts = (
      await h.app.inject({ url: `/alerts?accountId=${acct.accountId}`, headers: bearer(acct.key) })
    ).json().data as { endpointId: string; sequence: number }[];
    expect(alerts.filter((a) => a.endpointId === hook.data.id).map((a) => a.sequence)).toEqual([1]);
  });
});

describe('a COMMIT of the record whose answer is lost', () => {
  it('records the email once when the record is tried again', async () => {
    const poll = await visiblePoll(h, acct);
    const hook = await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/lost-ack');
    await h.deps.store.endpoints.recordGivenUp(hook.data.id, h.clock.now(), 'HTTP 500');
    h.clock.advance(WINDOWS.quietMs + 1);
    const mailer: Mailer = { send: async () => ({ refused: [] }), close: async () => {} };
    // The first record commits, and then its connection drops before the answer arrives.
    const real = h.deps.store;
    let lose = true;
    const store: Store = {
      ...real,
      transaction: async (fn) => {
        const r = await real.transaction(fn);
        if (lose && (await alertsOf(hook.data.id)).length > 0) {
          lose = false;
          throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '08006' });
        }
        return r;
      },
    };
    expect(await checkAlerts({ ...h.deps, store, mailer, alerts: WINDOWS })).toBe(1);
    expect(lose).toBe(false);
    expect((await alertsOf(hook.data.id)).map((a) => a.sequence)).toEqual([1]);
  });
});

describe('a new URL while the alert email is out', () => {
  it('keeps the email sent, and the new URL starts healthy, with no email counted against it', async () => {
    const poll = await visiblePoll(h, acct);
    const hook = await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/before-move');
    const webhookId = hook.data.id;
    await h.deps.store.endpoints.recordGivenUp(webhookId, h.clock.now(), 'HTTP 404');
    h.clock.advance(WINDOWS.quietMs + 1);
    const sent: OutgoingMail[] = [];
    // The URL is corrected while the email about the old one is being sent.
    const mailer: Mailer = {
      send: async (m) => {
        const moved = await h.app.inject({
          method: 'POST',
          url: '/webhooks/update',
          headers: bearer(acct.key),
          payload: { webhookId, url: 'https://hooks.example.com/after-move' },
        });
        expect(moved.statusCode, moved.body).toBe(200);
        sent.push(m);
        return { refused: [] };
      },
      close: async () => {},
    };
    expect(await checkAlerts({ ...h.deps, mailer, alerts: WINDOWS })).toBe(1);
    expect(sent).toHaveLength(1);
    const health = (
      (await h.app.inject({ url: `/webhooks?pollId=${poll.pollId}`, headers: bearer(acct.key) })).json().data as {
        url: string;
        health: { state: string; alertEmailsSent: number };
      }[]
    )[0]!;
    expect(health.url).toBe('https://hooks.example.com/after-move');
    expect(health.health).toMatchObject({ state: 'healthy', alertEmailsSent: 0 });
    const alerts = (
      await h.app.inject({ url: `/alerts?accountId=${acct.accountId}`, headers: bearer(acct.key) })
    ).json().data as { endpointId: string; subject: string; details: { endpoint: string } }[];
    expect(alerts.filter((a) => a.endpointId === webhookId)).toEqual([
      expect.objectContaining({
        subject: sent[0]!.subject,
        details: expect.objectContaining({ endpoint: 'https://hooks.example.com/before-move' }),
      }),
    ]);
    // Nothing more for the new URL until it fails a quiet period of its own.
    h.clock.advance(WINDOWS.quietMs + 1);
    expect(await checkAlerts({ ...h.deps, mailer, alerts: WINDOWS })).toBe(0);
  });
});

describe('a success while the alert email is out', () => {
  it('keeps the email sent, and the endpoint stays healthy, with no email counted against it', async () => {
    const poll = await visiblePoll(h, acct);
    const hook = await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/healed');
    const webhookId = hook.data.id;
    await h.deps.store.endpoints.recordGivenUp(webhookId, h.clock.now(), 'HTTP 500');
    h.clock.advance(WINDOWS.quietMs + 1);
    const sent: OutgoingMail[] = [];
    const mailer: Mailer = {
      send: async (m) => {
        // As a delivery's success records it (delivery-queue.ts).
        await sql`UPDATE endpoints SET last_success_at = ${h.clock.now()}, state = 'healthy', alert_emails_sent = 0
          WHERE id = ${webhookId}`.execute(h.database.db);
        sent.push(m);
        return { refused: [] };
      },
      close: async () => {},
    };
    expect(await checkAlerts({ ...h.deps, mailer, alerts: WINDOWS })).toBe(1);
    const [endpoint] = await h.deps.store.endpoints.getMany(acct.accountId, [webhookId]);
    expect(endpoint).toMatchObject({ state: 'healthy', alertEmailsSent: 0 });
    const alerts = (
      await h.app.inject({ url: `/alerts?accountId=${acct.accountId}`, headers: bearer(acct.key) })
    ).json().data as { endpointId: string; sequence: number }[];
    expect(alerts.filter((a) => a.endpointId === webhookId).map((a) => a.sequence)).toEqual([1]);
  });
});

describe('another delivery given up while the alert email is out', () => {
  it('leaves the email recorded once: the endpoint is alerted about, and not mailed again', async () => {
    const poll = await visiblePoll(h, acct);
    const hook = await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/still-failing');
    const webhookId = hook.data.id;
    await h.deps.store.endpoints.recordGivenUp(webhookId, h.clock.now(), 'HTTP 500');
    h.clock.advance(WINDOWS.quietMs + 1);
    const sent: OutgoingMail[] = [];
    const mailer: Mailer = {
      send: async (m) => {
        await h.deps.store.endpoints.recordGivenUp(webhookId, h.clock.now(), 'HTTP 500');
        sent.push(m);
        return { refused: [] };
      },
      close: async () => {},
    };
    const deps: Deps = { ...h.deps, mailer, alerts: WINDOWS };
    expect(await checkAlerts(deps)).toBe(1);
    expect(await checkAlerts(deps)).toBe(0);
    expect(sent).toHaveLength(1);
  });
});

describe('an SMTP send that outlasts the hold', () => {
  it('keeps the endpoint held while the email is out, so another scheduler does not mail it too', async () => {
    // A hold of 2 s (the reminder period, being shorter than 2 min), renewed every 0.5 s.
    const windows = { quietMs: 60_000, reminderMs: 2_000 };
    // Storage of its own: by its clock, the other tests' endpoints would be due reminders.
    const h = await harness();
    const acct = await h.account();
    try {
      const poll = await visiblePoll(h, acct);
      const hook = await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/slow-smtp');
      await h.deps.store.endpoints.recordGivenUp(hook.data.id, h.clock.now(), 'HTTP 500');
      h.clock.advance(windows.quietMs + 1);
      const sent: OutgoingMail[] = [];
      let started!: () => void;
      const sending = new Promise<void>((r) => (started = r));
      let finish!: () => void;
      const finished = new Promise<void>((r) => (finish = r));
      const slow: Mailer = {
        send: async (m) => {
          started();
          await finished;
          sent.push(m);
          return { refused: [] };
        },
        close: async () => {},
      };
      // Every hold written for the endpoint.
      const holds: number[] = [];
      const store = h.deps.store;
      const watched: Store = {
        ...store,
        alerts: {
          ...store.alerts,
          hold: async (id, until) => {
            if (id === hook.data.id && until) holds.push(until.getTime());
            return store.alerts.hold(id, until);
          },
        },
      };
      // One email at most: by the advanced clock, a reminder falls due right after it.
      const first = checkAlerts({ ...h.deps, store: watched, mailer: slow, alerts: windows }, 1);
      await sending;
      // Longer than the hold passes while the email is out; the sender renews it meanwhile.
      h.clock.advance(2 * windows.reminderMs);
      const advancedTo = h.clock.now().getTime();
      while (!holds.some((until) => until > advancedTo)) await new Promise((r) => setTimeout(r, 20));
      const other: OutgoingMail[] = [];
      const quick: Mailer = { send: async (m) => (other.push(m), { refused: [] }), close: async () => {} };
      expect(await checkAlerts({ ...h.deps, mailer: quick, alerts: windows })).toBe(0);
      finish();
      expect(await first).toBe(1);
      expect(sent).toHaveLength(1);
      expect(other).toHaveLength(0);
    } finally {
      await h.close();
    }
  });
});

describe('a Trigger webhook action removed while its endpoint is due an alert', () => {
  it('sends no email and stops counting its failures, so the action added again is alerted about when it fails anew, and recovered', async () => {
    const url = 'https://hooks.example.com/removed-action';
    const poll = await visiblePoll(h, acct);
    const setActions = async (actionLogic: object[]) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/poll/update',
        headers: bearer(acct.key),
        payload: { pollId: poll.pollId, actionLogic },
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    await setActions([{ on: 'complete', action: { type: 'trigger-webhook', url } }]);
    const endpointId = (
      await h.deps.store.endpoints.ensureLogic([
        {
          id: 'end_removed_action',
          accountId: acct.accountId,
          pollId: poll.pollId,
          source: 'survey-logic',
          slideId: null,
          url,
          createdAt: h.clock.now(),
        },
      ])
    )[0]!;
    await h.deps.store.endpoints.recordGivenUp(endpointId, h.clock.now(), 'HTTP 404');
    // A delivery to it lost, as a give-up records one.
    await sql`INSERT INTO deliveries (id, account_id, poll_id, endpoint_id, source, url, participant_id, type, status, body, created_at, finished_at)
      VALUES ('dlv_removed_action', ${acct.accountId}, ${poll.pollId}, ${endpointId}, 'survey-logic', ${url}, 'par_x',
        'completed-survey', 'given_up', '{}', ${h.clock.now()}, ${h.clock.now()})`.execute(h.database.db);
    await sql`INSERT INTO lost_deliveries (delivery_id, endpoint_id, lost_at)
      VALUES ('dlv_removed_action', ${endpointId}, ${h.clock.now()})`.execute(h.database.db);
    expect(await h.deps.store.deliveries.countLost(endpointId, new Date(0))).toBe(1);
    await setActions([]);
    h.clock.advance(WINDOWS.quietMs + 1);
    const sent: OutgoingMail[] = [];
    const mailer: Mailer = { send: async (m) => (sent.push(m), { refused: [] }), close: async () => {} };
    const deps: Deps = { ...h.deps, mailer, alerts: WINDOWS };
    await checkAlerts(deps);
    expect(sent.filter((m) => m.text.includes(url))).toEqual([]);
    const [forgotten] = await h.deps.store.endpoints.getMany(acct.accountId, [endpointId]);
    expect(forgotten).toMatchObject({ state: 'healthy', alertEmailsSent: 0, lastGivenUpAt: null });

    await setActions([{ on: 'complete', action: { type: 'trigger-webhook', url } }]);
    await h.deps.store.endpoints.recordGivenUp(endpointId, h.clock.now(), 'HTTP 404');
    h.clock.advance(WINDOWS.quietMs + 1);
    await checkAlerts(deps);
    expect(sent.filter((m) => m.text.includes(url))).toHaveLength(1);
    // The losses before the removal are not counted in it, and a recover of the action added
    // again still resends them.
    expect(await h.deps.store.deliveries.countLost(endpointId, new Date(0))).toBe(0);
    const recovered = await h.app.inject({
      method: 'POST',
      url: '/webhooks/recover',
      headers: bearer(acct.key),
      payload: { pollId: poll.pollId, since: new Date(h.clock.now().getTime() - 7 * 86_400_000).toISOString() },
    });
    expect(recovered.statusCode, recovered.body).toBe(202);
    expect(recovered.json().data).toEqual({ resent: 1 });
  });
});

describe('a database lost for longer than the record’s tries, within the process’s life', () => {
  it('keeps the email sent and records it at the next pass, before planning: never sent twice', async () => {
    // A database of its own: no other test's endpoint falls due in these passes.
    const h = await harness();
    const acct = await h.account();
    try {
      const poll = await visiblePoll(h, acct);
      const hook = await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/outage');
      const webhookId = hook.data.id;
      await h.deps.store.endpoints.recordGivenUp(webhookId, h.clock.now(), 'HTTP 500');
      h.clock.advance(WINDOWS.quietMs + 1);
      const sent: OutgoingMail[] = [];
      const mailer: Mailer = { send: async (m) => (sent.push(m), { refused: [] }), close: async () => {} };
      const told: SentAlert[] = [];
      const unrecorded: UnrecordedAlert[] = [];
      const down = recordingWith(async () => {
        throw new Error('database lost');
      }, h);
      const pass = (store: Store) =>
        checkAlerts({ ...h.deps, store, mailer, alerts: WINDOWS }, 50, undefined, (e) => told.push(e), unrecorded);
      await expect(pass(down)).rejects.toThrow(/sent but not recorded yet .*database lost/);
      expect(sent).toHaveLength(1);
      expect(unrecorded).toHaveLength(1);
      expect(told).toEqual([]);
      // Still down at the next pass: it ends there, and sends nothing.
      h.clock.advance(SENDING_HOLD_MS);
      await expect(pass(down)).rejects.toThrow(/1 failure alert email\(s\) sent but not recorded yet/);
      expect(sent).toHaveLength(1);
      // Back, after the hold: the email is recorded and counted, not sent again.
      expect(await pass(h.deps.store)).toBe(1);
      expect(sent).toHaveLength(1);
      expect(unrecorded).toEqual([]);
      expect(told).toMatchObject([{ webhookId, sequence: 1, kind: 'first' }]);
      const listed = (
        await h.app.inject({ url: `/alerts?accountId=${acct.accountId}`, headers: bearer(acct.key) })
      ).json().data as { endpointId: string; sequence: number }[];
      expect(listed.map((a) => [a.endpointId, a.sequence])).toEqual([[told[0]!.endpointId, 1]]);
      expect(await pass(h.deps.store)).toBe(0);
      expect(sent).toHaveLength(1);
    } finally {
      await h.close();
    }
  });
});
