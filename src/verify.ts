// The verifier ships as its own package, @canvass/verify; `canvass/verify` re-exports it.
export {
  DEFAULT_TOLERANCE_MS,
  verifySignature,
  WebhookVerificationError,
  type VerifyFailure,
  type VerifyOptions,
} from '@canvass/verify';
