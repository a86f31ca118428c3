import { useState } from 'react';

/**
 * The account's signing secret, returned once by the call that created it: shown here once, never
 * again, naming its account (the user may have moved to another while the call was out).
 */
export function SigningSecret({
  secret,
  accountName,
  onDismiss,
}: {
  secret: string;
  accountName: string | null;
  onDismiss: () => void;
}) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const copy = async () => {
    try {
      // No clipboard outside a secure context (a plain http address other than this machine).
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <div className="secret-once" role="alert" aria-labelledby="secret-title">
      <h3 id="secret-title">Signing secret{accountName ? ` of ${accountName}` : ''} — shown only this once</h3>
      <p>
        Every delivery of {accountName ?? 'this account'} (saved webhooks and logic-triggered ones) is signed with it.
        Store it now: Canvass will not show it again.
      </p>
      <code className="secret" data-testid="signing-secret">
        {secret}
      </code>
      <div className="actions">
        <button type="button" onClick={() => void copy()}>
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDismiss}>
          I have stored it
        </button>
      </div>
      {copied === 'failed' && (
        <p className="error" role="alert">
          The browser would not copy it: select the secret above and copy it by hand.
        </p>
      )}
    </div>
  );
}
