import { useState } from 'react';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../../api/types';
import { isoFromLocal } from '../../../ui/components';
import { afterLabels, useCursorPages, useLoad } from '../../../ui/hooks';
import { useSession } from '../../../ui/session';
import { CreatedWindow, DeliveryLogResults } from './DeliveryLog';
import { RefreshControls, useRefresh } from './Refresh';
import './deliveries.css';

/**
 * The delivery log of a poll (GET /webhooks/deliveries), newest first, filtered by status and
 * webhook on the server and by creation time on the page shown; a delivery opens its detail.
 */
export function Deliveries({ pollId }: { pollId: string }) {
  const { api } = useSession();
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const [webhookId, setWebhookId] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const pages = useCursorPages();

  const hooks = useLoad(() => api.get('/webhooks', { pollId, limit: 100 }).then((r) => r.data), pollId);
  const scope = webhookId ? { webhookId } : { pollId };
  const fromIso = isoFromLocal(from);
  const toIso = isoFromLocal(to);
  const log = useLoad(
    () =>
      api.get('/webhooks/deliveries', {
        ...scope,
        status,
        createdAfter: fromIso,
        createdBefore: toIso,
        startCursor: pages.cursor,
        limit: 20,
      }),
    JSON.stringify([pollId, webhookId, status, fromIso, toIso, pages.cursor]),
  );
  const refresh = useRefresh(log.reload, log.loading);

  // A saved webhook's current URL; a logic-triggered delivery's own (its source is in the Event column).
  const endpointOf = (d: { webhookId: string | null; url: string }) =>
    d.webhookId ? (hooks.data?.find((h) => h.id === d.webhookId)?.url ?? d.webhookId) : d.url;
  const changeFilter =
    <T,>(set: (v: T) => void) =>
    (v: T) => {
      set(v);
      pages.first();
    };

  return (
    <section aria-labelledby="deliveries-title">
      <div className="row">
        <h2 id="deliveries-title">Deliveries</h2>
        <RefreshControls refresh={refresh} />
      </div>
      <form className="filters" aria-label="Filter deliveries" onSubmit={(e) => e.preventDefault()}>
        <div>
          <label htmlFor="delivery-status">Status</label>
          <select
            id="delivery-status"
            value={status}
            onChange={(e) => changeFilter(setStatus)(e.target.value as DeliveryStatus | '')}
          >
            <option value="">any</option>
            {DELIVERY_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.replace('_', ' ')}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="delivery-webhook">Webhook</label>
          <select id="delivery-webhook" value={webhookId} onChange={(e) => changeFilter(setWebhookId)(e.target.value)}>
            <option value="">all of this poll (and logic-triggered)</option>
            {(hooks.data ?? []).map((h) => (
              <option key={h.id} value={h.id}>
                {h.url}
              </option>
            ))}
          </select>
        </div>
        <CreatedWindow
          idPrefix="delivery"
          from={from}
          to={to}
          onFrom={changeFilter(setFrom)}
          onTo={changeFilter(setTo)}
        />
      </form>
      <DeliveryLogResults
        log={afterLabels(log, hooks)}
        pages={pages}
        refreshTick={refresh.tick}
        open={open}
        onOpen={setOpen}
        endpoint={endpointOf}
      />
    </section>
  );
}
