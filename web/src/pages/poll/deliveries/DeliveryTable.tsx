import type { ReactNode } from 'react';
import type { Delivery } from '../../../api/types';
import { Badge, TableWrap, When } from '../../../ui/components';
import { DeliveryStatusBadge } from './DeliveryStatusBadge';

/** A page of deliveries, newest first; each row's View opens that delivery's detail. */
export function DeliveryTable({
  rows,
  open,
  onOpen,
  endpoint,
  poll,
}: {
  rows: Delivery[];
  open: string | null;
  onOpen: (deliveryId: string) => void;
  endpoint: (d: Delivery) => ReactNode;
  /** A Poll column, for a log that spans several polls. */
  poll?: (d: Delivery) => ReactNode;
}) {
  return (
    <TableWrap label="Deliveries">
      <table className="deliveries stack">
        <caption className="sr-only">Deliveries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Created</th>
            <th scope="col">Status</th>
            {poll && <th scope="col">Poll</th>}
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
              {poll && <td data-label="Poll">{poll(d)}</td>}
              <td data-label="Event">
                <div>
                  {d.type}
                  {d.test && <Badge tone="neutral">test</Badge>}
                  {d.source !== 'webhook' && <div className="muted small">{d.source}</div>}
                </div>
              </td>
              <td data-label="Endpoint" className="url">
                {endpoint(d)}
              </td>
              <td data-label="Attempts">{d.attemptCount}</td>
              <td data-label="">
                <button
                  type="button"
                  onClick={() => onOpen(d.id)}
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
  );
}
