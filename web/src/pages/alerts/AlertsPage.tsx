import { useState } from 'react';
import type { AlertEmail } from '../../api/types';
import { Badge, ErrorNote, Pager, RoleNotice, StatusNote, When } from '../../ui/components';
import { useCursorPages, useLoad } from '../../ui/hooks';
import { Link } from '../../ui/router';
import { useSession } from '../../ui/session';
import { WEBHOOK_ROLES } from '../../ui/roles';
import './alerts.css';

/** The failure-alert emails sent for the account (GET /alerts), newest first, with their content. */
export function AlertsPage() {
  const { account } = useSession();
  if (!WEBHOOK_ROLES.includes(account.role)) {
    return (
      <RoleNotice
        title="Alerts"
        who="Alerts report webhooks' failures and are seen by owners, admins and billing admins, as webhooks are"
      />
    );
  }
  return <AccountAlerts />;
}

function AccountAlerts() {
  const { api, account } = useSession();
  const pages = useCursorPages();
  const alerts = useLoad(
    () => api.get('/alerts', { accountId: account.accountId, startCursor: pages.cursor, limit: 20 }),
    `${account.accountId}:${pages.cursor}`,
  );
  const list = alerts.data;
  return (
    <>
      <h1>Alerts</h1>
      <p>
        Emails Canvass sent because an endpoint stopped accepting deliveries: a first alert, then weekly reminders,
        three at most.
      </p>
      <ErrorNote>{alerts.error}</ErrorNote>
      {alerts.loading && !list && <StatusNote>Loading alerts…</StatusNote>}
      {list && list.data.length === 0 && <p>No alert emails have been sent for {account.accountName}.</p>}
      <ul className="alerts">
        {list?.data.map((a) => (
          <AlertItem key={a.id} alert={a} />
        ))}
      </ul>
      {(list?.hasNextPage || pages.page > 0) && (
        <Pager
          label="Alerts"
          page={pages.page}
          hasNext={list?.hasNextPage ?? false}
          onFirst={pages.first}
          onPrev={pages.prev}
          onNext={() => pages.next(list?.endCursor ?? null)}
        />
      )}
    </>
  );
}

function AlertItem({ alert: a }: { alert: AlertEmail }) {
  const [html, setHtml] = useState(false);
  return (
    <li className="card">
      <h2 className="alert-subject">{a.subject}</h2>
      <p>
        <Badge tone={a.kind === 'first' ? 'bad' : 'warn'}>
          {a.kind === 'first' ? 'first alert' : `reminder ${a.sequence - 1}`}
        </Badge>{' '}
        sent <When at={a.sentAt} /> to {a.recipients.join(', ')}
      </p>
      <dl className="facts">
        <dt>Endpoint</dt>
        <dd className="url">{a.details.endpoint}</dd>
        <dt>Survey</dt>
        <dd>
          <Link to={{ name: 'poll', pollId: a.details.survey.id, section: 'deliveries' }}>
            {a.details.survey.title}
          </Link>
          {a.details.question && <> — question “{a.details.question.title}”</>}
        </dd>
        <dt>Trigger</dt>
        <dd>{a.details.trigger}</dd>
        <dt>Configured in</dt>
        <dd>{a.details.configuredIn}</dd>
        <dt>What went wrong</dt>
        <dd>{a.details.whatWentWrong}</dd>
        <dt>Responses lost in the past week</dt>
        <dd>{a.details.responsesLostPastWeek}</dd>
      </dl>
      <details>
        <summary>Email text</summary>
        <pre className="mail">{a.text}</pre>
      </details>
      <button type="button" aria-expanded={html} onClick={() => setHtml((h) => !h)}>
        {html ? 'Hide the HTML version' : 'Show the HTML version'}
      </button>
      {html && <iframe className="mail-html" title={`HTML version of “${a.subject}”`} sandbox="" srcDoc={a.html} />}
    </li>
  );
}
