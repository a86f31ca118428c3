import { useState, type FormEvent } from 'react';
import { SLIDE_TYPES, type CreateSlideBody, type LogicRule, type Slide, type SlideType } from '../../../api/types';
import { ErrorNote } from '../../../ui/components';
import { useAction } from '../../../ui/hooks';
import { WEBHOOK_ROLES } from '../../../ui/roles';
import { useSession } from '../../../ui/session';
import { LogicEditor, type DraftRule } from '../logic/LogicEditor';
import { CHOICE_TYPES, conditionValue } from '../logic/logic';

const MULTI_TYPES: SlideType[] = ['question', 'checkbox', 'dropdown'];

/** Adds a slide (POST /slide) with its answers and question logic. */
export function SlideForm({ pollId, slides, onAdded }: { pollId: string; slides: Slide[]; onAdded: () => void }) {
  const { api, account } = useSession();
  const [type, setType] = useState<SlideType>('question');
  const [title, setTitle] = useState('');
  const [subtitle, setSubtitle] = useState('');
  const [answers, setAnswers] = useState('');
  const [multi, setMulti] = useState(false);
  const [rules, setRules] = useState<DraftRule[]>([]);

  const choice = CHOICE_TYPES.includes(type);
  const add = useAction(async () => {
    const logic: LogicRule[] = rules.map((r) => ({
      match: r.match,
      conditions: r.conditions.map((c) => {
        const value = conditionValue(c.op, c.value, type);
        return value === undefined ? { op: c.op } : { op: c.op, value };
      }),
      action: r.action,
    }));
    const body: CreateSlideBody = { pollId, type, title };
    if (subtitle.trim()) body.subtitle = subtitle;
    if (choice) {
      body.answers = answers
        .split('\n')
        .map((a) => a.trim())
        .filter(Boolean)
        .map((t) => ({ title: t }));
    }
    if (MULTI_TYPES.includes(type)) body.multi = multi;
    if (logic.length) body.logic = logic;
    await api.post('/slide', body);
    setTitle('');
    setSubtitle('');
    setAnswers('');
    setMulti(false);
    setRules([]);
    onAdded();
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void add.go();
  };

  return (
    <form onSubmit={submit} className="card" aria-labelledby="slide-form-title">
      <h3 id="slide-form-title">Add a slide</h3>
      <label htmlFor="slide-type">Type</label>
      <select id="slide-type" value={type} onChange={(e) => setType(e.target.value as SlideType)}>
        {SLIDE_TYPES.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
      <label htmlFor="slide-title">Question or title</label>
      <input id="slide-title" value={title} onChange={(e) => setTitle(e.target.value)} required maxLength={1000} />
      <label htmlFor="slide-subtitle">Subtitle (optional)</label>
      <input id="slide-subtitle" value={subtitle} onChange={(e) => setSubtitle(e.target.value)} maxLength={2000} />
      {choice && (
        <>
          <label htmlFor="slide-answers">Answers, one per line</label>
          <textarea id="slide-answers" rows={4} value={answers} onChange={(e) => setAnswers(e.target.value)} />
        </>
      )}
      {MULTI_TYPES.includes(type) && (
        <label className="check">
          <input type="checkbox" checked={multi} onChange={(e) => setMulti(e.target.checked)} /> Several answers may be
          chosen
        </label>
      )}
      <LogicEditor
        rules={rules}
        onChange={setRules}
        slides={slides}
        canTrigger={WEBHOOK_ROLES.includes(account.role)}
      />
      <ErrorNote>{add.error}</ErrorNote>
      <button type="submit" className="primary" disabled={add.busy}>
        {add.busy ? 'Adding…' : 'Add slide'}
      </button>
    </form>
  );
}
