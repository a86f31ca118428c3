import { useState, type FormEvent } from 'react';
import type { DeliveryRule, Webhook } from '../../../api/types';
import { ErrorNote } from '../../../ui/components';
import { useAction } from '../../../ui/hooks';
import { useSession } from '../../../ui/session';
import { RULES } from './rules';

/** A webhook's URL and delivery rule, changed in place: its id and its deliveries' ids stay. */
export function WebhookEdit({
  webhook: w,
  onSaved,
  onCancel,
}: {
  webhook: Webhook;
  onSaved: (w: Webhook, message: string) => void;
  onCancel: () => void;
}) {
  const { api } = useSession();
  // What changed is told against the webhook as the form opened with it, not as a reload since
  // shows it: a URL another admin saved meanwhile is not put back by a change of the rule.
  const [opened] = useState(w);
  const [url, setUrl] = useState(w.url);
  const [rule, setRule] = useState<DeliveryRule>(w.deliveryRule);
  const save = useAction(async () => {
    const newUrl = url.trim() === opened.url ? undefined : url.trim();
    // Only what changed: a new URL is checked (and resolved) again by the server.
    const { data } = await api.post('/webhooks/update', {
      webhookId: w.id,
      url: newUrl,
      deliveryRule: rule === opened.deliveryRule ? undefined : rule,
    });
    onSaved(data, newUrl ? `Saved. Pending retries now go to ${data.url}.` : 'Saved.');
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.go();
  };
  const unchanged = url.trim() === opened.url && rule === opened.deliveryRule;
  return (
    <form className="inline-form" onSubmit={submit} aria-labelledby={`edit-title-${w.id}`}>
      <h4 id={`edit-title-${w.id}`}>Edit the webhook</h4>
      <label htmlFor={`edit-url-${w.id}`}>Endpoint URL (public https)</label>
      <input
        id={`edit-url-${w.id}`}
        type="url"
        value={url}
        onChange={(e) => setUrl(e.target.value)}
        required
        aria-describedby={`edit-url-help-${w.id}`}
      />
      <small id={`edit-url-help-${w.id}`}>
        Deliveries still waiting for a retry go to the new URL from their next attempt.
      </small>
      <label htmlFor={`edit-rule-${w.id}`}>When to send</label>
      <select id={`edit-rule-${w.id}`} value={rule} onChange={(e) => setRule(e.target.value as DeliveryRule)}>
        <option value="partial">{RULES.partial}</option>
        <option value="complete">{RULES.complete}</option>
      </select>
      <ErrorNote>{save.error}</ErrorNote>
      <div className="actions">
        <button type="submit" className="primary" disabled={save.busy || unchanged}>
          {save.busy ? 'Saving…' : 'Save changes'}
        </button>
        <button type="button" onClick={onCancel} disabled={save.busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}
