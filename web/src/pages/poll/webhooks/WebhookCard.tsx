import { useRef, useState } from 'react';
import type { Webhook } from '../../../api/types';
import { Badge, ConfirmButton, ErrorNote, StatusNote, When } from '../../../ui/components';
import { useAction } from '../../../ui/hooks';
import { Link } from '../../../ui/router';
import { useSession } from '../../../ui/session';
import { HealthBadge } from './HealthBadge';
import { LegacySecret } from './LegacySecret';
import { RecoverForm } from './RecoverForm';
import { RULES } from './rules';
import { WebhookEdit } from './WebhookEdit';

/** One webhook: what it is and how it is doing, and the controls over it (edit, pause, test, recover, delete). */
export function WebhookCard({
  webhook: w,
  onChanged,
  onDelete,
  deleting = false,
}: {
  webhook: Webhook;
  onChanged: () => void;
  onDelete: (w: Webhook) => void;
  /** A delete is under way: a second would answer "not found" for the one that succeeded. */
  deleting?: boolean;
}) {
  const { api } = useSession();
  const [open, setOpen] = useState<'edit' | 'recover' | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const editButton = useRef<HTMLButtonElement>(null);
  const recoverButton = useRef<HTMLButtonElement>(null);

  const close = (form: 'edit' | 'recover') => {
    setOpen(null);
    (form === 'edit' ? editButton : recoverButton).current?.focus();
  };
  const toggle = (form: 'edit' | 'recover') => {
    setMessage(null);
    setOpen((o) => (o === form ? null : form));
  };

  const pause = useAction(async (paused: boolean) => {
    setMessage(null);
    await api.post('/webhooks/update', { webhookId: w.id, paused });
    setMessage(paused ? 'Paused.' : 'Resumed: the deliveries that waited are being sent now.');
    onChanged();
  });
  const test = useAction(async () => {
    setMessage(null);
    const { data } = await api.post('/webhooks/test', { webhookId: w.id });
    setMessage(`Test event queued as delivery ${data.id}${w.paused ? '; it waits until you resume' : ''}.`);
  });

  return (
    <li className="card">
      <div className="row">
        <h3 className="url">
          {w.url}
          {w.paused && ' '}
          {w.paused && <Badge tone="warn">paused</Badge>}
        </h3>
        <button
          type="button"
          className="danger"
          onClick={() => onDelete(w)}
          aria-label={`Delete webhook ${w.url}`}
          disabled={deleting}
        >
          Delete
        </button>
      </div>
      <p className="muted mono small">{w.id}</p>
      <p>
        {RULES[w.deliveryRule]} · created <When at={w.createdAt} />
      </p>
      {w.paused && (
        <p className="notice small">
          Paused since <When at={w.pausedAt} />: nothing is sent and no alert goes out until you resume.
        </p>
      )}
      <HealthBadge health={w.health} />
      <div className="actions webhook-actions">
        <button
          type="button"
          ref={editButton}
          aria-expanded={open === 'edit'}
          aria-label={`Edit webhook ${w.url}`}
          onClick={() => toggle('edit')}
        >
          Edit
        </button>
        <button
          type="button"
          aria-label={`${w.paused ? 'Resume' : 'Pause'} webhook ${w.url}`}
          disabled={pause.busy}
          onClick={() => void pause.go(!w.paused)}
        >
          {w.paused ? 'Resume' : 'Pause'}
        </button>
        <ConfirmButton
          label={`Send a test event to ${w.url}`}
          busy={test.busy}
          onConfirm={test.go}
          prompt={
            <>
              Send a signed test event to {w.url}? It carries a made-up respondent (metadata test: true) with a sample
              answer to each question.
            </>
          }
        >
          Send test event
        </ConfirmButton>
        <button
          type="button"
          ref={recoverButton}
          aria-expanded={open === 'recover'}
          aria-label={`Recover failed deliveries of ${w.url}`}
          onClick={() => toggle('recover')}
        >
          Recover
        </button>
      </div>
      {message && <StatusNote>{message}</StatusNote>}
      <ErrorNote>{pause.error}</ErrorNote>
      <ErrorNote>{test.error}</ErrorNote>
      {open === 'edit' && (
        <WebhookEdit
          webhook={w}
          onCancel={() => close('edit')}
          onSaved={(_, text) => {
            close('edit');
            setMessage(text);
            onChanged();
          }}
        />
      )}
      {open === 'recover' && (
        <RecoverForm
          webhook={w}
          onCancel={() => close('recover')}
          onDone={(text) => {
            close('recover');
            setMessage(text);
          }}
        />
      )}
      <LegacySecret webhookId={w.id} secret={w.legacySecret} />
      <p>
        <Link to={{ name: 'poll', pollId: w.pollId, section: 'deliveries' }}>Delivery log of this poll</Link>
      </p>
    </li>
  );
}
