import type { Attempt } from '../../../api/types';
import { Badge, When } from '../../../ui/components';

function outcome(a: Attempt) {
  if (a.statusCode !== null) {
    const ok = a.statusCode >= 200 && a.statusCode < 300;
    return <Badge tone={ok ? 'good' : 'bad'}>HTTP {a.statusCode}</Badge>;
  }
  return <Badge tone="bad">{a.error ?? 'no answer'}</Badge>;
}

/** Every attempt of one delivery, oldest first: when, the answer's status or the error, how long, what came back. */
export function AttemptTimeline({ attempts }: { attempts: Attempt[] }) {
  if (attempts.length === 0) return <p>No attempt yet.</p>;
  return (
    <ol className="timeline" aria-label="Attempts">
      {attempts.map((a) => (
        <li key={a.number} className="attempt">
          <div className="attempt-head">
            <strong>Attempt {a.number}</strong> {outcome(a)}
            <span className="muted">{a.durationMs} ms</span>
          </div>
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
    </ol>
  );
}
