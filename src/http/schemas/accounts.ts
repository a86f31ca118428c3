import { Type } from '@sinclair/typebox';
import { PLANS, ROLES } from '../../domain/access.js';
import { Nullable, Outgoing, Strict, StringEnum } from './common.js';
import { DisplaySettings, EmailDisplaySettings, Opt, SmsDisplaySettings, VisibilitySettings } from './settings.js';
import { AccountId } from './polls.js';

export const AccountSettingsBody = Strict({
  accountId: AccountId,
  displaySettings: Opt(DisplaySettings),
  emailDisplaySettings: Opt(EmailDisplaySettings),
  smsDisplaySettings: Opt(SmsDisplaySettings),
  visibilitySettings: Opt(VisibilitySettings),
  notificationRecipients: Opt(
    Type.Union([Type.Array(Type.String({ format: 'email', maxLength: 254 }), { maxItems: 50 }), Type.Null()]),
  ),
});

// ---- Answers ----------------------------------------------------------------------------------

/** An account the key's user is a member of, with the user's role and the account's plan. */
export const Membership = Type.Object(
  {
    accountId: Type.String(),
    accountName: Type.String(),
    role: StringEnum(ROLES),
    plan: StringEnum(PLANS),
  },
  { title: 'Membership' },
);

export const Memberships = Type.Array(Membership);

/** Account-level defaults: an object is absent until it is set. */
export const AccountSettings = Type.Object(
  {
    accountId: Type.String(),
    displaySettings: Opt(Outgoing(DisplaySettings)),
    emailDisplaySettings: Opt(Outgoing(EmailDisplaySettings)),
    smsDisplaySettings: Opt(Outgoing(SmsDisplaySettings)),
    visibilitySettings: Opt(Outgoing(VisibilitySettings)),
    notificationRecipients: Nullable(
      Type.Array(Type.String(), { description: 'who gets failure alerts; null (or empty): the owner' }),
    ),
  },
  { title: 'AccountSettings' },
);

const Usage = Type.Object({ used: Type.Integer(), quota: Type.Integer() });

/** How much of each of its quotas the account uses (docs/operations.md, "Quotas"). */
export const AccountUsage = Type.Object(
  { accountId: Type.String(), polls: Usage, members: Usage, liveKeys: Usage },
  { title: 'AccountUsage' },
);
