import { useState } from 'react';

/** A webhook's legacy X-Service-Secret value, hidden until asked for. */
export function LegacySecret({ webhookId, secret }: { webhookId: string; secret: string }) {
  const [shown, setShown] = useState(false);
  const id = `legacy-${webhookId}`;
  return (
    <div className="legacy">
      <button type="button" aria-expanded={shown} aria-controls={id} onClick={() => setShown((s) => !s)}>
        {shown ? 'Hide legacy secret' : 'Reveal legacy secret'}
      </button>
      <code id={id} className="secret" hidden={!shown}>
        {shown ? secret : ''}
      </code>
    </div>
  );
}
