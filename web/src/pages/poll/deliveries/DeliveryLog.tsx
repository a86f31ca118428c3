import type { ReactNode } from 'react';
import type { Delivery } from '../../../api/types';
import { ErrorNote, Pager, StatusNote } from '../../../ui/components';
import type { Loaded, useCursorPages } from '../../../ui/hooks';
import { DeliveryDetail } from './DeliveryDetail';
import { DeliveryTable } from './DeliveryTable';

/** The "created from / until" inputs of a delivery log's filters (local time). */
export function CreatedWindow({
  idPrefix,
  from,
  to,
  onFrom,
  onTo,
}: {
  idPrefix: string;
  from: string;
  to: string;
  onFrom: (value: string) => void;
  onTo: (value: string) => void;
}) {
  return (
    <>
      <div>
        <label htmlFor={`${idPrefix}-from`}>Created from</label>
        <input
          id={`${idPrefix}-from`}
          type="datetime-local"
          step="1"
          value={from}
          onChange={(e) => onFrom(e.target.value)}
          aria-describedby={`${idPrefix}-time-help`}
        />
      </div>
      <div>
        <label htmlFor={`${idPrefix}-to`}>Created until</label>
        <input
          id={`${idPrefix}-to`}
          type="datetime-local"
          step="1"
          value={to}
          onChange={(e) => onTo(e.target.value)}
          aria-describedby={`${idPrefix}-time-help`}
        />
      </div>
      <small id={`${idPrefix}-time-help`}>Your local time.</small>
    </>
  );
}

/** A delivery log's page of results: the table, its pager, and the detail of the one opened. */
export function DeliveryLogResults({
  log,
  pages,
  refreshTick,
  open,
  onOpen,
  endpoint,
  poll,
}: {
  log: Loaded<{ data: Delivery[]; hasNextPage: boolean; endCursor: string | null }>;
  pages: ReturnType<typeof useCursorPages>;
  refreshTick: number;
  open: string | null;
  onOpen: (deliveryId: string | null) => void;
  endpoint: (d: Delivery) => ReactNode;
  poll?: (d: Delivery) => ReactNode;
}) {
  const rows = log.data?.data ?? [];
  return (
    <>
      <ErrorNote>{log.error}</ErrorNote>
      {log.loading && !log.data && <StatusNote>Loading deliveries…</StatusNote>}
      {log.data && rows.length === 0 && <p>No deliveries match.</p>}
      {rows.length > 0 && <DeliveryTable rows={rows} open={open} onOpen={onOpen} endpoint={endpoint} poll={poll} />}
      {(log.data?.hasNextPage || pages.page > 0) && (
        <Pager
          label="Deliveries"
          page={pages.page}
          hasNext={log.data?.hasNextPage ?? false}
          onFirst={pages.first}
          onPrev={pages.prev}
          onNext={() => pages.next(log.data?.endCursor ?? null)}
        />
      )}
      {open && (
        <DeliveryDetail
          key={open}
          deliveryId={open}
          refresh={refreshTick}
          onClose={() => onOpen(null)}
          onChanged={log.reload}
        />
      )}
    </>
  );
}
