import { useState } from 'react';
import { DELIVERY_STATUSES, type AnswerOf, type DeliveryStatus } from '../../api/types';
import { isoFromLocal, RoleNotice } from '../../ui/components';
import { afterLabels, useCursorPages, useLoad } from '../../ui/hooks';
import { Link } from '../../ui/router';
import { useSession } from '../../ui/session';
import { WEBHOOK_ROLES } from '../../ui/roles';
import { CreatedWindow, DeliveryLogResults } from '../poll/deliveries/DeliveryLog';
import { RefreshControls, useRefresh } from '../poll/deliveries/Refresh';
import '../poll/deliveries/deliveries.css';
import './deliveries-page.css';

type PollsPage = AnswerOf<'get', '/polls'>;

/** How many pages of polls the Poll column's titles are read from at most. */
const TITLE_PAGES = 3;

const FAILED: DeliveryStatus[] = ['rejected', 'given_up'];

/**
 * Every delivery of the account (GET /webhooks/deliveries?accountId=), all polls and targets,
 * newest first; any set of statuses at once (none ticked: every status). A delivery opens its detail.
 */
export function DeliveriesPage() {
  const { account } = useSession();
  if (!WEBHOOK_ROLES.includes(account.role)) {
    return <RoleNotice title="Delivery log" who="Deliveries are seen by owners, admins and billing admins" />;
  }
  return <AccountDeliveries />;
}

function AccountDeliveries() {
  const { api, account } = useSession();
  const [statuses, setStatuses] = useState<DeliveryStatus[]>([]);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const pages = useCursorPages();

  // Poll titles for the Poll column: the account's first 100 polls, over up to TITLE_PAGES pages
  // (a page ends early past 8 MiB of settings, and polls come with their translations, so more
  // pages would hold the log back for tens of MiB); any other poll shows its id.
  const polls = useLoad(async () => {
    const found: PollsPage['data'] = [];
    let cursor: string | null = null;
    for (let read = 0; read < TITLE_PAGES && found.length < 100; read++) {
      const page: PollsPage = await api.get('/polls', {
        accountId: account.accountId,
        limit: 100 - found.length,
        startCursor: cursor,
      });
      found.push(...page.data);
      if (!page.hasNextPage || !page.endCursor || page.endCursor === cursor) break;
      cursor = page.endCursor;
    }
    return found;
  }, account.accountId);
  const fromIso = isoFromLocal(from);
  const toIso = isoFromLocal(to);
  const status = statuses.join(',');
  const log = useLoad(
    () =>
      api.get('/webhooks/deliveries', {
        accountId: account.accountId,
        status,
        createdAfter: fromIso,
        createdBefore: toIso,
        startCursor: pages.cursor,
        limit: 20,
      }),
    JSON.stringify([account.accountId, status, fromIso, toIso, pages.cursor]),
  );
  const refresh = useRefresh(log.reload, log.loading);

  // Any filter change starts again from the first page.
  const filter = (change: () => void) => {
    change();
    pages.first();
  };
  const toggle = (s: DeliveryStatus, on: boolean) =>
    filter(() => setStatuses((cur) => DELIVERY_STATUSES.filter((x) => (x === s ? on : cur.includes(x)))));

  const pollTitle = (id: string) => polls.data?.find((p) => p.id === id)?.title ?? id;

  return (
    <>
      <div className="row">
        <h1>Delivery log</h1>
        <RefreshControls refresh={refresh} />
      </div>
      <p>
        Every delivery of {account.accountName}, newest first: saved webhooks and logic-triggered targets, on every
        poll.
      </p>
      <form className="filters" aria-label="Filter deliveries" onSubmit={(e) => e.preventDefault()}>
        <fieldset className="statuses">
          <legend>Status</legend>
          <div className="checks">
            {DELIVERY_STATUSES.map((s) => (
              <label key={s} className="check">
                <input type="checkbox" checked={statuses.includes(s)} onChange={(e) => toggle(s, e.target.checked)} />{' '}
                {s.replace('_', ' ')}
              </label>
            ))}
          </div>
          <div className="actions">
            <button type="button" onClick={() => filter(() => setStatuses(FAILED))}>
              Failed only
            </button>
            <button type="button" onClick={() => filter(() => setStatuses([]))} disabled={statuses.length === 0}>
              Any status
            </button>
          </div>
        </fieldset>
        <CreatedWindow
          idPrefix="account-delivery"
          from={from}
          to={to}
          onFrom={(v) => filter(() => setFrom(v))}
          onTo={(v) => filter(() => setTo(v))}
        />
      </form>
      <DeliveryLogResults
        log={afterLabels(log, polls)}
        pages={pages}
        refreshTick={refresh.tick}
        open={open}
        onOpen={setOpen}
        endpoint={(d) => d.url}
        poll={(d) => <Link to={{ name: 'poll', pollId: d.pollId, section: 'deliveries' }}>{pollTitle(d.pollId)}</Link>}
      />
    </>
  );
}
