import { useEffect, useRef, useState } from 'react';
import type { DeliveryStatus } from '../../../api/types';
import { Badge, ConfirmButton, ErrorNote, StatusNote, When } from '../../../ui/components';
import { useAction, useLoad } from '../../../ui/hooks';
import { useSession } from '../../../ui/session';
import { AttemptTimeline } from './AttemptTimeline';
import { DeliveryStatusBadge } from './DeliveryStatusBadge';

/** Only a finished delivery can be sent again; one on its way or cancelled cannot. */
const FINISHED: DeliveryStatus[] = ['delivered', 'rejected', 'given_up'];

/** One delivery (GET /webhooks/delivery): its attempts as a timeline and the payload it sends; Resend when finished. */
export function DeliveryDetail({
  deliveryId,
  refresh,
  onClose,
  onChanged,
}: {
  deliveryId: string;
  refresh: number;
  onClose: () => void;
  /** After a resend, so the list around it shows the new status. */
  onChanged?: () => void;
}) {
  const { api } = useSession();
  const [message, setMessage] = useState<string | null>(null);
  const detail = useLoad(() => api.get('/webhooks/delivery', { deliveryId }).then((r) => r.data), deliveryId);
  const { reload } = detail;
  // Reloaded with its list, unless its own last load is still out (as the list's, Refresh.tsx).
  const loading = useRef(detail.loading);
  loading.current = detail.loading;
  useEffect(() => {
    if (refresh && !loading.current) reload();
  }, [refresh, reload]);
  const resend = useAction(async () => {
    setMessage(null);
    const { data } = await api.post('/webhooks/delivery/resend', { deliveryId });
    setMessage(`Resent as attempt ${data.attemptCount + 1}.`);
    reload();
    onChanged?.();
  });
  const d = detail.data;
  return (
    <section aria-labelledby="delivery-title" className="card delivery-detail">
      <div className="row">
        <h3 id="delivery-title" className="mono">
          {deliveryId}
        </h3>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {message && <StatusNote>{message}</StatusNote>}
      <ErrorNote>{detail.error}</ErrorNote>
      <ErrorNote>{resend.error}</ErrorNote>
      {!d && !detail.error && <StatusNote>Loading the delivery…</StatusNote>}
      {d && (
        <>
          <dl className="facts">
            <dt>Status</dt>
            <dd>
              <DeliveryStatusBadge status={d.status} />
              {d.test && <Badge tone="neutral">test</Badge>}
            </dd>
            <dt>Event</dt>
            <dd>{d.type}</dd>
            <dt>Source</dt>
            <dd>{d.source}</dd>
            <dt>URL</dt>
            <dd className="url">{d.url}</dd>
            <dt>Participant</dt>
            <dd className="mono">{d.participantId}</dd>
            <dt>Created</dt>
            <dd>
              <When at={d.createdAt} />
            </dd>
            <dt>{d.finishedAt ? 'Finished' : 'Next attempt'}</dt>
            <dd>
              <When at={d.finishedAt ?? d.nextAttemptAt} />
            </dd>
          </dl>
          {FINISHED.includes(d.status) && (
            <div className="actions">
              <ConfirmButton
                busy={resend.busy}
                onConfirm={resend.go}
                prompt={
                  <>
                    Send this delivery again to {d.url}? The same delivery id and body, signed afresh, as attempt{' '}
                    {d.attemptCount + 1}, with a fresh retry ladder.
                  </>
                }
              >
                Resend
              </ConfirmButton>
            </div>
          )}
          <h4>Attempts</h4>
          <AttemptTimeline attempts={d.attempts} events={d.events} />
          <h4>Payload</h4>
          <pre className="json payload" tabIndex={0} aria-label="Payload JSON">
            {JSON.stringify(d.payload, null, 2)}
          </pre>
        </>
      )}
    </section>
  );
}
