import { useRef, useState, type FormEvent } from 'react';
import type { Webhook } from '../../../api/types';
import { ConfirmStep, ErrorNote, isoFromLocal, When } from '../../../ui/components';
import { useAction, useFocusWhen } from '../../../ui/hooks';
import { useSession } from '../../../ui/session';

const queued = (n: number) => `${n} ${n === 1 ? 'delivery' : 'deliveries'} queued`;

/**
 * Resends a webhook's rejected and given-up deliveries created in a time window. The window is
 * picked in local time and sent as UTC; nothing is sent before the second step confirms it.
 */
export function RecoverForm({
  webhook: w,
  onDone,
  onCancel,
}: {
  webhook: Webhook;
  onDone: (message: string) => void;
  onCancel: () => void;
}) {
  const { api } = useSession();
  const [since, setSince] = useState('');
  const [until, setUntil] = useState('');
  const [asking, setAsking] = useState(false);
  // Confirmed or cancelled, the confirmation goes: focus returns to the button that asked.
  const ask = useRef<HTMLButtonElement>(null);
  useFocusWhen(!asking, ask);
  const sinceIso = isoFromLocal(since);
  const untilIso = isoFromLocal(until);
  const recover = useAction(async () => {
    const { data } = await api.post('/webhooks/recover', { webhookId: w.id, since: sinceIso!, until: untilIso });
    onDone(`${queued(data.resent)} for ${w.url}.`);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    recover.setError(null);
    if (!sinceIso) return recover.setError('Pick when the window starts.');
    if (untilIso && untilIso <= sinceIso) return recover.setError('The window must end after it starts.');
    setAsking(true);
  };
  const id = (name: string) => `recover-${name}-${w.id}`;
  return (
    <form className="inline-form" onSubmit={submit} aria-labelledby={id('title')}>
      <h4 id={id('title')}>Recover failed deliveries</h4>
      <p className="small">
        Sends again every rejected or given-up delivery of this webhook created in the window: the same delivery ids and
        bodies, signed afresh.
      </p>
      <div className="window">
        <div>
          <label htmlFor={id('since')}>Created from</label>
          <input
            id={id('since')}
            type="datetime-local"
            step="1"
            required
            value={since}
            disabled={asking}
            onChange={(e) => setSince(e.target.value)}
            aria-describedby={id('since-utc')}
          />
          <small id={id('since-utc')}>{sinceIso ? `UTC ${sinceIso}` : 'Your local time.'}</small>
        </div>
        <div>
          <label htmlFor={id('until')}>Created until (optional)</label>
          <input
            id={id('until')}
            type="datetime-local"
            step="1"
            value={until}
            disabled={asking}
            onChange={(e) => setUntil(e.target.value)}
            aria-describedby={id('until-utc')}
          />
          <small id={id('until-utc')}>{untilIso ? `UTC ${untilIso}` : 'Empty: up to now.'}</small>
        </div>
      </div>
      <ErrorNote>{recover.error}</ErrorNote>
      {asking ? (
        <ConfirmStep
          busy={recover.busy}
          onCancel={() => setAsking(false)}
          onConfirm={() => void recover.go().finally(() => setAsking(false))}
        >
          Resend every rejected or given-up delivery to {w.url} created from <When at={sinceIso} />{' '}
          {untilIso ? (
            <>
              until <When at={untilIso} />
            </>
          ) : (
            'until now'
          )}
          ?{w.paused && ' The webhook is paused: they wait until you resume it.'}
        </ConfirmStep>
      ) : (
        <div className="actions">
          <button type="submit" className="primary" ref={ask}>
            Recover…
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      )}
    </form>
  );
}
