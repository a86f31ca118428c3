import { useState } from 'react';

/** The account's signing secret, returned once by the call that created it: shown here once, never again. */
export function SigningSecret({ secret, onDismiss }: { secret: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return (
    <div className="secret-once" role="alert" aria-labelledby="secret-title">
      <h3 id="secret-title">Signing secret — shown only this once</h3>
      <p>
        Every delivery of this account (saved webhooks and logic-triggered ones) is signed with it. Store it now:
        Canvass will not show it again.
      </p>
      <code className="secret" data-testid="signing-secret">
        {secret}
      </code>
      <div className="actions">
        <button type="button" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDismiss}>
          I have stored it
        </button>
      </div>
    </div>
  );
}
