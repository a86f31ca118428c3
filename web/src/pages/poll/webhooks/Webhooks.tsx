import { useState, type FormEvent } from 'react';
import type { DeliveryRule, Webhook } from '../../../api/types';
import { ErrorNote, StatusNote } from '../../../ui/components';
import { useAction, useLoad } from '../../../ui/hooks';
import { useSession } from '../../../ui/session';
import { RULES } from './rules';
import { WebhookCard } from './WebhookCard';
import './webhooks.css';

/** A poll's webhooks (20 at most): create and delete, and each one's card with its controls. */
export function Webhooks({ pollId }: { pollId: string }) {
  const { api } = useSession();
  const [url, setUrl] = useState('');
  const [rule, setRule] = useState<DeliveryRule>('partial');
  const [message, setMessage] = useState<string | null>(null);
  const hooks = useLoad(() => api.get('/webhooks', { pollId, limit: 100 }), pollId);

  const create = useAction(async () => {
    // A signingSecret in the answer is shown by the app (SigningSecret), once.
    setMessage(null);
    try {
      const res = await api.post('/webhooks', { pollId, url, deliveryRule: rule });
      setUrl('');
      setMessage(`Created the webhook to ${res.data.url}.`);
    } finally {
      // Also after a failure: a create that timed out may have been made, and shows in the list
      // before anyone sends it again.
      hooks.reload();
    }
  });
  const remove = useAction(async (w: Webhook) => {
    if (!window.confirm(`Delete the webhook to ${w.url}? Its pending deliveries are cancelled.`)) return;
    setMessage(null);
    const { data } = await api.del('/webhooks', { id: w.id });
    setMessage(`Deleted the webhook to ${w.url}; ${data.cancelledDeliveries} pending deliveries cancelled.`);
    hooks.reload();
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.go();
  };
  const list = hooks.data?.data ?? [];

  return (
    <section aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">Webhooks</h2>
      {message && <StatusNote>{message}</StatusNote>}
      <ErrorNote>{hooks.error}</ErrorNote>
      <ErrorNote>{remove.error}</ErrorNote>
      {hooks.loading && !hooks.data && <StatusNote>Loading webhooks…</StatusNote>}
      {hooks.data && list.length === 0 && <p>No webhooks on this poll yet.</p>}
      <ul className="webhooks">
        {list.map((w) => (
          <WebhookCard
            key={w.id}
            webhook={w}
            onChanged={hooks.reload}
            onDelete={(x) => void remove.go(x)}
            deleting={remove.busy}
          />
        ))}
      </ul>
      <form onSubmit={submit} className="card" aria-labelledby="webhook-form-title">
        <h3 id="webhook-form-title">Add a webhook</h3>
        <label htmlFor="webhook-url">Endpoint URL (public https)</label>
        <input
          id="webhook-url"
          type="url"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          placeholder="https://hooks.example.com/canvass"
          required
        />
        <label htmlFor="webhook-rule">When to send</label>
        <select id="webhook-rule" value={rule} onChange={(e) => setRule(e.target.value as DeliveryRule)}>
          <option value="partial">{RULES.partial}</option>
          <option value="complete">{RULES.complete}</option>
        </select>
        <ErrorNote>{create.error}</ErrorNote>
        <button type="submit" className="primary" disabled={create.busy}>
          {create.busy ? 'Creating…' : 'Create webhook'}
        </button>
      </form>
    </section>
  );
}
