import type { DeliveryStatus } from '../../../api/types';
import { Badge } from '../../../ui/components';

const TONE: Record<DeliveryStatus, 'good' | 'bad' | 'warn' | 'neutral'> = {
  delivered: 'good',
  pending: 'warn',
  in_flight: 'warn',
  rejected: 'bad',
  given_up: 'bad',
  cancelled: 'neutral',
};

export function DeliveryStatusBadge({ status }: { status: DeliveryStatus }) {
  return <Badge tone={TONE[status]}>{status.replace('_', ' ')}</Badge>;
}
