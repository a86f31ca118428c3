/** The built-in defaults: what a poll gets for every object the request (and the account) leaves out. */
export const SPEC_DEFAULTS = {
  settings: {
    showCounter: true,
    allowResubmissions: false,
    notifyOnComplete: true,
    urlDependant: false,
    automaticallySwitchSlides: true,
    autoClose: false,
    allowEdits: false,
    apiOnly: false,
    isSynthetic: false,
    anonymous: false,
  },
  displaySettings: {
    backgroundColor: '#212a2f',
    actionColor: '#212a2f',
    notificationColor: '#F26c57',
    showLink: false,
    align: 'right',
    borderRadius: 8,
    borderWidth: 1,
    maxWidth: 400,
    maxHeight: 575,
    position: [20, 20],
    shape: 'bumper',
    hideLauncher: true,
    showCounter: true,
  },
  emailDisplaySettings: {
    subject: 'Have a minute for a quick survey?',
    backgroundColor: '#f5f7f9',
    foregroundColor: '#ffffff',
    buttonColor: '#212a2f',
    buttonFontColor: '#ffffff',
    fontColor: '#000000',
    fontFamily: 'sans',
    showLink: false,
    linkType: 'input',
  },
  smsDisplaySettings: {
    message: 'We want your feedback! Click the link to complete our survey.',
  },
  visibilitySettings: {
    autoOpenDevice: false,
    autoOpenDuration: 0,
    autoOpenPosition: 0,
    autoOpenDurationType: 'page',
    renderOnExitIntent: false,
    renderDuration: false,
    renderPosition: false,
    renderDevice: false,
    renderDurationType: 'page',
    hideAfterSubmission: false,
    hideAfterClose: true,
    showAfterSubmission: false,
    openAttempts: true,
  },
} as const;

/** The objects whose defaults an account may override (PATCH /account/settings). */
export const ACCOUNT_LEVEL_OBJECTS = [
  'displaySettings',
  'emailDisplaySettings',
  'smsDisplaySettings',
  'visibilitySettings',
] as const;
export type AccountLevelObject = (typeof ACCOUNT_LEVEL_OBJECTS)[number];
export type AccountDefaults = Partial<Record<AccountLevelObject, Record<string, unknown>>>;

/** The storefront surfaces a poll can target, each with its fixed page rule. */
export const SURFACE_RULES = {
  thankYou: '/(.)/thank_you',
  orderStatus: '/:order_number/orders/:variable',
  checkout: '/checkouts/(.)',
  customerAccounts: '/account',
  posPostPurchase: '/pos/post-purchase',
  posHome: '/pos/home',
} as const;

export const POS_RULES: readonly string[] = [SURFACE_RULES.posPostPurchase, SURFACE_RULES.posHome];
