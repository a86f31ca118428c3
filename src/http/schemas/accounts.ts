import { Type } from '@sinclair/typebox';
import { Strict } from './common.js';
import { DisplaySettings, EmailDisplaySettings, Opt, SmsDisplaySettings, VisibilitySettings } from './settings.js';
import { AccountId } from './polls.js';

export const AccountSettingsBody = Strict({
  accountId: AccountId,
  displaySettings: Opt(DisplaySettings),
  emailDisplaySettings: Opt(EmailDisplaySettings),
  smsDisplaySettings: Opt(SmsDisplaySettings),
  visibilitySettings: Opt(VisibilitySettings),
  notificationRecipients: Opt(
    Type.Union([Type.Array(Type.String({ format: 'email', maxLength: 320 }), { maxItems: 50 }), Type.Null()]),
  ),
});
