import type { Poll } from '../../../api/types';
import { ErrorNote, When } from '../../../ui/components';
import { useAction } from '../../../ui/hooks';
import { href, navigate } from '../../../ui/router';
import { WEBHOOK_ROLES } from '../../../ui/roles';
import { useSession } from '../../../ui/session';
import './overview.css';

const yesNo = (v: unknown) => (v ? 'yes' : 'no');

export function PollOverview({ poll }: { poll: Poll }) {
  const { api, account } = useSession();
  const remove = useAction(async () => {
    if (!window.confirm(`Delete “${poll.title}”, its slides and its webhooks?`)) return;
    await api.del('/poll', { pollId: poll.id });
    navigate(href({ name: 'polls' }));
  });
  const languages = Object.keys(poll.languageSettings?.languages ?? {});
  // A poll's Trigger webhook actions go with it: webhook management (README, API overview). Saved
  // webhooks, which an editor does not see, are the API's to refuse.
  const triggers = [...(poll.actionLogic ?? []), ...(poll.slides ?? []).flatMap((s) => s.logic ?? [])].some(
    (r) => r.action.type === 'trigger-webhook',
  );
  const guarded = triggers && !WEBHOOK_ROLES.includes(account.role);
  return (
    <section aria-labelledby="overview-title">
      <h2 id="overview-title">Overview</h2>
      <dl className="facts">
        <dt>Visibility</dt>
        <dd>{poll.isVisible ? 'visible: respondents can answer' : 'hidden: respondents cannot answer yet'}</dd>
        <dt>Slides</dt>
        <dd>{poll.slides?.length ?? 0}</dd>
        <dt>Anonymous</dt>
        <dd>{yesNo(poll.settings.anonymous)}</dd>
        <dt>API only</dt>
        <dd>{yesNo(poll.settings.apiOnly)}</dd>
        <dt>Synthetic</dt>
        <dd>{yesNo(poll.settings.isSynthetic)}</dd>
        <dt>Languages</dt>
        <dd>{languages.length ? languages.join(', ') : 'none configured'}</dd>
        <dt>Created</dt>
        <dd>
          <When at={poll.createdAt} />
        </dd>
        <dt>Updated</dt>
        <dd>
          <When at={poll.updatedAt} />
        </dd>
      </dl>
      <details>
        <summary>The whole poll as JSON</summary>
        <pre className="json">{JSON.stringify(poll, null, 2)}</pre>
      </details>
      {account.role !== 'read_only' && (
        <div className="danger-zone">
          <ErrorNote>{remove.error}</ErrorNote>
          <button
            type="button"
            className="danger"
            onClick={() => void remove.go()}
            disabled={remove.busy || guarded}
            aria-describedby={guarded ? 'delete-guarded' : undefined}
          >
            Delete this poll
          </button>
          {guarded && (
            <p id="delete-guarded" className="muted small">
              Its logic triggers webhooks: owners, admins and billing admins delete it.
            </p>
          )}
        </div>
      )}
    </section>
  );
}
