import type { Slide } from '../../../api/types';
import { ErrorNote, StatusNote } from '../../../ui/components';
import { useAction, useLoad } from '../../../ui/hooks';
import { WEBHOOK_ROLES } from '../../../ui/roles';
import { useSession } from '../../../ui/session';
import { describeRule } from '../logic/logic';
import { SlideForm } from './SlideForm';
import './slides.css';

/** A poll's slides in order (GET /slides), each with its answers and logic; add and delete. */
export function Slides({
  pollId,
  onChanged,
}: {
  pollId: string;
  /** The poll as loaded counts its slides. */ onChanged: () => void;
}) {
  const { api, account } = useSession();
  const slides = useLoad(() => api.get('/slides', { pollId }).then((r) => r.data), pollId);
  const remove = useAction(async (slide: Slide) => {
    if (!window.confirm(`Delete the slide “${slide.title}”?`)) return;
    await api.del('/slide', { slideId: slide.id });
    slides.reload();
    onChanged();
  });
  const list = slides.data ?? [];
  const canWrite = account.role !== 'read_only';
  // Deleting a slide removes its Trigger webhook actions: webhook management (README, API overview).
  const guarded = (s: Slide) =>
    !WEBHOOK_ROLES.includes(account.role) && !!s.logic?.some((r) => r.action.type === 'trigger-webhook');

  return (
    <section aria-labelledby="slides-title">
      <h2 id="slides-title">Slides</h2>
      <ErrorNote>{slides.error}</ErrorNote>
      <ErrorNote>{remove.error}</ErrorNote>
      {slides.loading && !slides.data && <StatusNote>Loading slides…</StatusNote>}
      {slides.data && list.length === 0 && <p>No slides yet. Respondents need at least one to answer.</p>}
      <ol className="slides">
        {list.map((s) => (
          <li key={s.id} className="card">
            <div className="row">
              <h3>
                {s.title} <span className="badge badge-neutral">{s.type}</span>
              </h3>
              {canWrite && (
                <button
                  type="button"
                  className="danger"
                  onClick={() => void remove.go(s)}
                  aria-label={`Delete slide ${s.title}`}
                  disabled={guarded(s) || remove.busy}
                  aria-describedby={guarded(s) ? `guarded-${s.id}` : undefined}
                >
                  Delete
                </button>
              )}
            </div>
            {canWrite && guarded(s) && (
              <p id={`guarded-${s.id}`} className="muted small">
                Its logic triggers a webhook: owners, admins and billing admins delete it.
              </p>
            )}
            {s.subtitle && <p>{s.subtitle}</p>}
            <p className="muted mono small">{s.id}</p>
            {s.answers.length > 0 && (
              <p>
                Answers{s.multi ? ' (several allowed)' : ''}: {s.answers.map((a) => a.title).join(' · ')}
              </p>
            )}
            {s.logic && s.logic.length > 0 && (
              <div>
                <h4>Logic</h4>
                <ul className="logic-list">
                  {s.logic.map((r, i) => (
                    <li key={i}>{describeRule(r, list, account.role)}</li>
                  ))}
                </ul>
              </div>
            )}
          </li>
        ))}
      </ol>
      {canWrite && <SlideForm pollId={pollId} slides={list} onAdded={() => (slides.reload(), onChanged())} />}
    </section>
  );
}
