import { useEffect, useState } from 'react';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../../api/types';
import { ErrorNote, isoFromLocal, Pager, StatusNote, When, TableWrap } from '../../../ui/components';
import { useCursorPages, useLoad } from '../../../ui/hooks';
import { useSession } from '../../../ui/session';
import { DeliveryDetail } from './DeliveryDetail';
import { DeliveryStatusBadge } from './DeliveryStatusBadge';
import './deliveries.css';

const REFRESH_MS = 5000;

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
  const [auto, setAuto] = useState(true);
  const [tick, setTick] = useState(0);
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
  const { reload } = log;

  useEffect(() => {
    if (!auto) return;
    const t = setInterval(() => {
      if (document.visibilityState === 'visible') {
        reload();
        setTick((n) => n + 1);
      }
    }, REFRESH_MS);
    return () => clearInterval(t);
  }, [auto, reload]);

  const refresh = () => {
    reload();
    setTick((n) => n + 1);
  };

  const rows = log.data?.data ?? [];
  const hookUrl = (id: string | null) => (id ? (hooks.data?.find((h) => h.id === id)?.url ?? id) : 'logic-triggered');
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
        <div className="actions">
          <label className="check">
            <input type="checkbox" checked={auto} onChange={(e) => setAuto(e.target.checked)} /> Refresh every 5 s
          </label>
          <button type="button" onClick={refresh}>
            Refresh
          </button>
        </div>
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
        <div>
          <label htmlFor="delivery-from">Created from</label>
          <input
            id="delivery-from"
            type="datetime-local"
            step="1"
            value={from}
            onChange={(e) => changeFilter(setFrom)(e.target.value)}
            aria-describedby="delivery-time-help"
          />
        </div>
        <div>
          <label htmlFor="delivery-to">Created until</label>
          <input
            id="delivery-to"
            type="datetime-local"
            step="1"
            value={to}
            onChange={(e) => changeFilter(setTo)(e.target.value)}
            aria-describedby="delivery-time-help"
          />
        </div>
        <small id="delivery-time-help">Your local time.</small>
      </form>
      <ErrorNote>{log.error}</ErrorNote>
      {log.loading && !log.data && <StatusNote>Loading deliveries…</StatusNote>}
      {log.data && rows.length === 0 && <p>No deliveries match.</p>}
      {rows.length > 0 && (
        <TableWrap label="Deliveries">
          <table className="deliveries stack">
            <caption className="sr-only">Deliveries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Status</th>
                <th scope="col">Event</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Attempts</th>
                <th scope="col">
                  <span className="sr-only">Details</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id} className={open === d.id ? 'selected' : undefined}>
                  <td data-label="Created">
                    <When at={d.createdAt} />
                  </td>
                  <td data-label="Status">
                    <DeliveryStatusBadge status={d.status} />
                  </td>
                  <td data-label="Event">
                    <div>
                      {d.type}
                      {d.source !== 'webhook' && <div className="muted small">{d.source}</div>}
                    </div>
                  </td>
                  <td data-label="Endpoint" className="url">
                    {hookUrl(d.webhookId)}
                  </td>
                  <td data-label="Attempts">{d.attemptCount}</td>
                  <td data-label="">
                    <button
                      type="button"
                      onClick={() => setOpen(d.id)}
                      aria-label={`View delivery ${d.id}`}
                      aria-pressed={open === d.id}
                    >
                      View
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {log.data && (log.data.hasNextPage || pages.page > 0) && (
        <Pager
          label="Deliveries"
          page={pages.page}
          hasNext={log.data.hasNextPage}
          onFirst={pages.first}
          onPrev={pages.prev}
          onNext={() => pages.next(log.data?.endCursor ?? null)}
        />
      )}
      {open && <DeliveryDetail deliveryId={open} refresh={tick} onClose={() => setOpen(null)} />}
    </section>
  );
}
