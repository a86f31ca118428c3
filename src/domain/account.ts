import type { Plan } from './access.js';
import type { AccountDefaults } from './poll-defaults.js';

export type Account = {
  id: string;
  name: string;
  plan: Plan;
  defaults: AccountDefaults;
  notificationRecipients: string[] | null;
  signingSecret: string | null;
  createdAt: Date;
  updatedAt: Date;
};
