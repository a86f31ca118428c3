import { useEffect, useState } from 'react';
import { ErrorNote, StatusNote } from '../../ui/components';
import { useAction, useLoad } from '../../ui/hooks';
import { Link, POLL_SECTIONS, type PollSection } from '../../ui/router';
import { useSession } from '../../ui/session';
import { Deliveries } from './deliveries/Deliveries';
import { PollOverview } from './overview/PollOverview';
import { Responses } from './responses/Responses';
import { Slides } from './slides/Slides';
import { Translations } from './translations/Translations';
import { Webhooks } from './webhooks/Webhooks';
import { WEBHOOK_ROLES } from '../../ui/roles';
import './poll.css';

const LABELS: Record<PollSection, string> = {
  overview: 'Overview',
  slides: 'Slides',
  translations: 'Translations',
  responses: 'Responses',
  webhooks: 'Webhooks',
  deliveries: 'Deliveries',
};

export function PollPage({ pollId, section }: { pollId: string; section: PollSection }) {
  const { api, account } = useSession();
  const poll = useLoad(() => api.get('/poll', { pollId }).then((r) => r.data), pollId);
  // The switch moves at once; it moves back if the update fails, and the poll as loaded next
  // (the update's own reload, or one after another change) speaks for it again.
  const [visible, setVisible] = useState<boolean | null>(null);
  const visibility = useAction(async (isVisible: boolean) => {
    setVisible(isVisible);
    try {
      await api.post('/poll/update', { pollId, isVisible });
    } catch (err) {
      setVisible(null);
      throw err;
    }
    poll.reload();
  });
  // A load that lands while an update is on its way may predate it: only one after it speaks.
  useEffect(() => {
    if (!visibility.busy) setVisible(null);
  }, [poll.data]);

  const p = poll.data;
  if (!p) {
    return (
      <>
        <p>
          <Link to={{ name: 'polls' }}>← All polls</Link>
        </p>
        {poll.error ? <ErrorNote>{poll.error}</ErrorNote> : <StatusNote>Loading the poll…</StatusNote>}
      </>
    );
  }
  // A poll of another of the user's accounts (a link kept from it): its controls would follow
  // this account's role, and a secret it returned would show under this account's name.
  if (p.accountId !== account.accountId) {
    return (
      <>
        <p>
          <Link to={{ name: 'polls' }}>← All polls</Link>
        </p>
        <p className="notice" role="status">
          “{p.title}” belongs to another of your accounts ({p.accountId}): choose that account above to open it.
        </p>
      </>
    );
  }
  const canWrite = account.role !== 'read_only';
  const canWebhooks = WEBHOOK_ROLES.includes(account.role);

  return (
    <>
      <p className="crumbs">
        <Link to={{ name: 'polls' }}>← All polls</Link>
      </p>
      <div className="poll-head">
        <div>
          <h1>{p.title}</h1>
          <p className="muted mono small">{p.id}</p>
        </div>
        <label className="switch">
          <input
            type="checkbox"
            role="switch"
            checked={visible ?? p.isVisible}
            disabled={!canWrite}
            // One update at a time: two out at once may be applied in either order. Marked, not
            // disabled, so that the switch keeps the keyboard's focus meanwhile.
            aria-disabled={visibility.busy || undefined}
            onChange={(e) => void (!visibility.busy && visibility.go(e.target.checked))}
          />
          <span>Visible to respondents</span>
        </label>
      </div>
      <ErrorNote>{visibility.error}</ErrorNote>
      {/* A reload that failed (after a change here) keeps the poll as last read: say it may be stale. */}
      <ErrorNote>{poll.error && `The poll could not be read again, and may show what it was: ${poll.error}`}</ErrorNote>
      <nav aria-label="Poll sections" className="tabs">
        {POLL_SECTIONS.map((s) => (
          <Link key={s} to={{ name: 'poll', pollId, section: s }} current={s === section}>
            {LABELS[s]}
          </Link>
        ))}
      </nav>
      <div className="section-body">
        {section === 'overview' && <PollOverview poll={p} />}
        {section === 'slides' && <Slides pollId={pollId} onChanged={poll.reload} />}
        {section === 'translations' && <Translations poll={p} onChanged={poll.reload} />}
        {section === 'responses' && <Responses pollId={pollId} />}
        {(section === 'webhooks' || section === 'deliveries') && !canWebhooks && (
          <p className="notice">
            Webhooks and their deliveries are managed by owners, admins and billing admins; your role here is{' '}
            {account.role.replace('_', ' ')}.
          </p>
        )}
        {section === 'webhooks' && canWebhooks && <Webhooks pollId={pollId} />}
        {section === 'deliveries' && canWebhooks && <Deliveries pollId={pollId} />}
      </div>
    </>
  );
}
