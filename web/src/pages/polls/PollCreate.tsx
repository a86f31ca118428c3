import { useRef, useState, type FormEvent } from 'react';
import type { CommitBody, Poll } from '../../api/types';
import { ErrorNote } from '../../ui/components';
import { useAction, useFocusWhen } from '../../ui/hooks';
import { href, navigate } from '../../ui/router';
import { useSession } from '../../ui/session';

/** Create a poll in two steps: a dry run (POST /poll with dryRun) shows what would be saved, then POST /commit saves that preview. */
export function PollCreate({ onCreated }: { onCreated: () => void }) {
  const { api, account } = useSession();
  const [title, setTitle] = useState('');
  const [anonymous, setAnonymous] = useState(false);
  const [preview, setPreview] = useState<Poll | null>(null);
  // The button that moved between the two steps is gone: focus goes to the step shown.
  const previewHeading = useRef<HTMLHeadingElement>(null);
  const titleInput = useRef<HTMLInputElement>(null);
  useFocusWhen(!!preview, previewHeading);
  useFocusWhen(!preview, titleInput);

  const dryRun = useAction(async () => {
    const { data } = await api.post('/poll', {
      accountId: account.accountId,
      title,
      dryRun: true,
      settings: { anonymous },
    });
    setPreview(data);
  });
  const commit = useAction(async () => {
    if (!preview) return;
    // The preview goes back as POST /poll answered it; with no response schema for that answer,
    // its fit to /commit's body is asserted here rather than checked.
    const { data } = await api.post('/commit', { data: preview as CommitBody['data'] });
    setPreview(null);
    setTitle('');
    onCreated();
    navigate(href({ name: 'poll', pollId: data.id, section: 'overview' }));
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void dryRun.go();
  };

  return (
    <section aria-labelledby="poll-create-title" className="card">
      <h2 id="poll-create-title">Create a poll</h2>
      <form onSubmit={submit}>
        <label htmlFor="poll-title">Title</label>
        <input
          ref={titleInput}
          id="poll-title"
          value={title}
          onChange={(e) => setTitle(e.target.value)}
          required
          maxLength={500}
          disabled={!!preview}
        />
        <label className="check">
          <input
            type="checkbox"
            checked={anonymous}
            onChange={(e) => setAnonymous(e.target.checked)}
            disabled={!!preview}
          />{' '}
          Anonymous responses (webhook payloads name no email address; answers go out as given)
        </label>
        <ErrorNote>{dryRun.error}</ErrorNote>
        {!preview && (
          <button type="submit" disabled={dryRun.busy}>
            {dryRun.busy ? 'Checking…' : 'Preview'}
          </button>
        )}
      </form>
      {preview && (
        <section aria-labelledby="poll-preview-title" className="preview">
          <h3 id="poll-preview-title" ref={previewHeading} tabIndex={-1}>
            Preview — not saved yet
          </h3>
          <dl className="facts">
            <dt>Title</dt>
            <dd>{preview.title}</dd>
            <dt>Id it will get</dt>
            <dd className="mono">{preview.id}</dd>
            <dt>Visibility</dt>
            <dd>{preview.isVisible ? 'visible' : 'hidden until you make it visible'}</dd>
            <dt>Anonymous</dt>
            <dd>{preview.settings.anonymous ? 'yes' : 'no'}</dd>
          </dl>
          <details>
            <summary>Every setting, with the defaults applied</summary>
            <pre className="json">{JSON.stringify(preview, null, 2)}</pre>
          </details>
          <ErrorNote>{commit.error}</ErrorNote>
          <div className="actions">
            <button type="button" className="primary" onClick={() => void commit.go()} disabled={commit.busy}>
              {commit.busy ? 'Saving…' : 'Save poll'}
            </button>
            <button type="button" onClick={() => setPreview(null)} disabled={commit.busy}>
              Back to editing
            </button>
          </div>
        </section>
      )}
    </section>
  );
}
