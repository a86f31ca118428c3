import { Badge, ErrorNote, Pager, StatusNote, When, TableWrap } from '../../ui/components';
import { useCursorPages, useLoad } from '../../ui/hooks';
import { Link } from '../../ui/router';
import { useSession } from '../../ui/session';

export function PollList() {
  const { api, account } = useSession();
  const pages = useCursorPages();
  const polls = useLoad(
    () => api.get('/polls', { accountId: account.accountId, startCursor: pages.cursor, limit: 20 }),
    `${account.accountId}:${pages.cursor}`,
  );
  const list = polls.data;
  return (
    <section aria-labelledby="poll-list-title">
      <h2 id="poll-list-title">Your polls</h2>
      <ErrorNote>{polls.error}</ErrorNote>
      {polls.loading && !list && <StatusNote>Loading polls…</StatusNote>}
      {list && list.data.length === 0 && pages.page === 0 && <p>No polls yet: create one below.</p>}
      {list && list.data.length > 0 && (
        <TableWrap label="Polls">
          <table className="stack">
            <caption className="sr-only">Polls of {account.accountName}</caption>
            <thead>
              <tr>
                <th scope="col">Title</th>
                <th scope="col">Visibility</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((p) => (
                <tr key={p.id}>
                  <td data-label="Title">
                    <div>
                      <Link to={{ name: 'poll', pollId: p.id, section: 'overview' }}>{p.title}</Link>
                      <div className="muted mono small">{p.id}</div>
                    </div>
                  </td>
                  <td data-label="Visibility">
                    {p.isVisible ? <Badge tone="good">visible</Badge> : <Badge tone="neutral">hidden</Badge>}
                  </td>
                  <td data-label="Created">
                    <When at={p.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {(list?.hasNextPage || pages.page > 0) && (
        <Pager
          label="Polls"
          page={pages.page}
          hasNext={list?.hasNextPage ?? false}
          onFirst={pages.first}
          onPrev={pages.prev}
          onNext={() => pages.next(list?.endCursor ?? null)}
        />
      )}
    </section>
  );
}
