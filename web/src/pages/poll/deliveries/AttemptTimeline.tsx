import type { Attempt, DeliveryEvent } from '../../../api/types';
import { Badge, When } from '../../../ui/components';

function outcome(a: Attempt) {
  if (a.statusCode !== null) {
    const ok = a.statusCode >= 200 && a.statusCode < 300;
    return <Badge tone={ok ? 'good' : 'bad'}>HTTP {a.statusCode}</Badge>;
  }
  return <Badge tone="bad">{a.error ?? 'no answer'}</Badge>;
}

function eventText(e: DeliveryEvent): string {
  const by = e.by ? ` by ${e.by}` : '';
  switch (e.kind) {
    case 'resend':
      return `Followed a manual resend${by}`;
    case 'recover':
      return `Followed a recover${by}`;
    case 'test':
      return `Test event, sent${by}`;
  }
}

/** What people did before an attempt: a resend or recover that queued it, or the test event that made it. */
function Events({ events }: { events: DeliveryEvent[] }) {
  return events.map((e, i) => (
    <div key={i} className="attempt-event small">
      {eventText(e)}, <When at={e.at} />
    </div>
  ));
}

/**
 * Every attempt of one delivery, oldest first: when, the answer's status or the error, how long,
 * what came back, and the resend, recover or test event each followed. An event whose attempt
 * has not been made yet shows as a queued step at the end.
 */
export function AttemptTimeline({ attempts, events = [] }: { attempts: Attempt[]; events?: DeliveryEvent[] }) {
  const made = new Set(attempts.map((a) => a.number));
  const waiting = events.filter((e) => !made.has(e.attemptNumber));
  if (attempts.length === 0 && waiting.length === 0) return <p>No attempt yet.</p>;
  return (
    <ol className="timeline" aria-label="Attempts">
      {attempts.map((a) => (
        <li key={a.number} className="attempt">
          <div className="attempt-head">
            <strong>Attempt {a.number}</strong> {outcome(a)}
            <span className="muted">{a.durationMs} ms</span>
          </div>
          <Events events={events.filter((e) => e.attemptNumber === a.number)} />
          <div className="small">
            Sent <When at={a.sentAt} />
            {a.statusCode !== null && a.error && <> · {a.error}</>}
          </div>
          {a.responseExcerpt ? (
            <details>
              <summary>Answer (first 1 KiB)</summary>
              <pre className="json">{a.responseExcerpt}</pre>
            </details>
          ) : (
            <div className="muted small">No answer body.</div>
          )}
        </li>
      ))}
      {[...new Set(waiting.map((e) => e.attemptNumber))].map((n) => (
        <li key={`queued-${n}`} className="attempt queued">
          <div className="attempt-head">
            <strong>Attempt {n}</strong> <Badge tone="warn">queued</Badge>
          </div>
          <Events events={waiting.filter((e) => e.attemptNumber === n)} />
        </li>
      ))}
    </ol>
  );
}
