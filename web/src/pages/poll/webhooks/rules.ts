import type { DeliveryRule } from '../../../api/types';

export const RULES: Record<DeliveryRule, string> = {
  partial: 'Send if partially or fully completed',
  complete: 'Send only if fully completed',
};
