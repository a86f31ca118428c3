import { useEffect } from 'react';
import { ErrorNote, StatusNote, When } from '../../../ui/components';
import { useLoad } from '../../../ui/hooks';
import { useSession } from '../../../ui/session';
import { AttemptTimeline } from './AttemptTimeline';
import { DeliveryStatusBadge } from './DeliveryStatusBadge';

/** One delivery (GET /webhooks/delivery): its attempts as a timeline and the payload it sends. */
export function DeliveryDetail({
  deliveryId,
  refresh,
  onClose,
}: {
  deliveryId: string;
  refresh: number;
  onClose: () => void;
}) {
  const { api } = useSession();
  const detail = useLoad(() => api.get('/webhooks/delivery', { deliveryId }).then((r) => r.data), deliveryId);
  const { reload } = detail;
  useEffect(() => {
    if (refresh) reload();
  }, [refresh, reload]);
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
      <ErrorNote>{detail.error}</ErrorNote>
      {!d && !detail.error && <StatusNote>Loading the delivery…</StatusNote>}
      {d && (
        <>
          <dl className="facts">
            <dt>Status</dt>
            <dd>
              <DeliveryStatusBadge status={d.status} />
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
          <h4>Attempts</h4>
          <AttemptTimeline attempts={d.attempts} />
          <h4>Payload</h4>
          <pre className="json payload" tabIndex={0} aria-label="Payload JSON">
            {JSON.stringify(d.payload, null, 2)}
          </pre>
        </>
      )}
    </section>
  );
}
