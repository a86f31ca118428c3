import { useState, type FormEvent } from 'react';
import { ErrorNote, isoFromLocal, Pager, show, StatusNote, When, TableWrap } from '../../../ui/components';
import { afterLabels, useCursorPages, useAction, useLoad } from '../../../ui/hooks';
import { useSession } from '../../../ui/session';

type Filters = { createdAfter?: string; createdBefore?: string; limit: number };

/** Saves a blob under a file name through a temporary object URL. */
function saveBlob(blob: Blob, filename: string) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A byte count as a person reads it: whole KB, or MB with one decimal from 1 MB. */
function size(bytes: number): string {
  return bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** A poll's responses with time filters and cursor paging; CSV export of them, in the time range applied. */
export function Responses({ pollId }: { pollId: string }) {
  const { api } = useSession();
  const [after, setAfter] = useState('');
  const [before, setBefore] = useState('');
  const [limit, setLimit] = useState(20);
  const [filters, setFilters] = useState<Filters>({ limit: 20 });
  const pages = useCursorPages();

  const slides = useLoad(() => api.get('/slides', { pollId }).then((r) => r.data), pollId);
  const responses = useLoad(
    () => api.get('/responses', { pollId, ...filters, startCursor: pages.cursor }),
    JSON.stringify([pollId, filters, pages.cursor]),
  );
  const [received, setReceived] = useState(0);
  const exported = useAction(async () => {
    setReceived(0);
    // With a byte order mark: the file is for a person, whose spreadsheet reads it as UTF-8 only so.
    const { createdAfter, createdBefore } = filters;
    const { blob, filename } = await api.download(
      '/responses/export',
      { pollId, bom: true, createdAfter, createdBefore },
      setReceived,
    );
    saveBlob(blob, filename);
  });

  const apply = (e: FormEvent) => {
    e.preventDefault();
    pages.first();
    setFilters({ createdAfter: isoFromLocal(after), createdBefore: isoFromLocal(before), limit });
  };
  const clear = () => {
    setAfter('');
    setBefore('');
    pages.first();
    setFilters({ limit });
  };

  const titleOf = (slideId: string) => slides.data?.find((s) => s.id === slideId)?.title ?? slideId;
  const shown = afterLabels(responses, slides);
  const list = shown.data;

  return (
    <section aria-labelledby="responses-title">
      <div className="row">
        <h2 id="responses-title">Responses</h2>
        <button type="button" onClick={() => void exported.go()} disabled={exported.busy}>
          {exported.busy
            ? `Exporting…${received ? ` ${size(received)}` : ''}`
            : filters.createdAfter || filters.createdBefore
              ? 'Export CSV of this time range'
              : 'Export CSV'}
        </button>
      </div>
      <ErrorNote>{exported.error}</ErrorNote>
      <form onSubmit={apply} className="filters" aria-label="Filter responses">
        <div>
          <label htmlFor="responses-after">Created after</label>
          <input
            id="responses-after"
            type="datetime-local"
            step="1"
            value={after}
            onChange={(e) => setAfter(e.target.value)}
          />
        </div>
        <div>
          <label htmlFor="responses-before">Created before</label>
          <input
            id="responses-before"
            type="datetime-local"
            step="1"
            value={before}
            onChange={(e) => setBefore(e.target.value)}
          />
        </div>
        <div>
          <label htmlFor="responses-limit">Per page</label>
          <select id="responses-limit" value={limit} onChange={(e) => setLimit(Number(e.target.value))}>
            {[10, 20, 50, 100].map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </div>
        <div className="actions">
          <button type="submit">Apply filters</button>
          <button type="button" onClick={clear}>
            Clear
          </button>
        </div>
      </form>
      <ErrorNote>{shown.error}</ErrorNote>
      {shown.loading && !list && <StatusNote>Loading responses…</StatusNote>}
      {list && list.data.length === 0 && (
        <p>No responses{filters.createdAfter || filters.createdBefore ? ' in this time range' : ' yet'}.</p>
      )}
      {list && list.data.length > 0 && (
        <TableWrap label="Responses">
          <table className="stack">
            <caption className="sr-only">Responses of this poll</caption>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Participant</th>
                <th scope="col">Slide</th>
                <th scope="col">Answer</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((r) => (
                <tr key={r.id}>
                  <td data-label="Created">
                    <When at={r.createdAt} />
                  </td>
                  <td data-label="Participant" className="mono small">
                    {r.participantId}
                  </td>
                  <td data-label="Slide">{titleOf(r.slideId)}</td>
                  <td data-label="Answer">
                    <span>
                      {show(r.value)}
                      {r.synthetic && <span className="badge badge-neutral">synthetic</span>}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {(list || pages.page > 0) && (
        <Pager
          label="Responses"
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
