import type { Health } from '../../../api/types';
import { Badge, When } from '../../../ui/components';

/** An endpoint's failure-alert state: healthy, or alerted with how many emails went out. */
export function HealthBadge({ health }: { health: Health }) {
  return (
    <div className="health">
      {health.state === 'healthy' ? <Badge tone="good">healthy</Badge> : <Badge tone="bad">alerted</Badge>}
      <dl className="facts compact">
        <dt>Last success</dt>
        <dd>{health.lastSuccessAt ? <When at={health.lastSuccessAt} /> : 'never'}</dd>
        {health.lastGivenUpAt && (
          <>
            <dt>Last given up</dt>
            <dd>
              <When at={health.lastGivenUpAt} />
            </dd>
          </>
        )}
        <dt>Alert emails sent</dt>
        <dd>{health.alertEmailsSent}</dd>
      </dl>
    </div>
  );
}
