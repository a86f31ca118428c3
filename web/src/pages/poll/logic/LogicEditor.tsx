import { LOGIC_OPS, type LogicAction, type LogicOp, type Slide } from '../../../api/types';
import { opLabel } from './logic';
import './logic.css';

/** A rule as the form edits it: condition values are raw text until the slide is saved. */
export type DraftRule = { match: 'all' | 'any'; conditions: { op: LogicOp; value: string }[]; action: LogicAction };

export const emptyRule = (): DraftRule => ({
  match: 'any',
  conditions: [{ op: 'equals', value: '' }],
  action: { type: 'end-survey' },
});

const ACTIONS: { type: LogicAction['type']; label: string }[] = [
  { type: 'continue', label: 'Continue' },
  { type: 'skip-to', label: 'Skip to a slide' },
  { type: 'end-survey', label: 'End the survey' },
  { type: 'trigger-webhook', label: 'Trigger a webhook' },
];

function actionOf(type: LogicAction['type'], slides: Slide[]): LogicAction {
  if (type === 'skip-to') return { type, slideId: slides[0]?.id ?? '' };
  if (type === 'trigger-webhook') return { type, url: 'https://' };
  return { type };
}

/**
 * Question logic: rules on this slide's answer, each with conditions and one action. A Trigger
 * webhook action is webhook management: offered only to the roles that may save one (`canTrigger`).
 */
export function LogicEditor({
  rules,
  onChange,
  slides,
  canTrigger,
}: {
  rules: DraftRule[];
  onChange: (rules: DraftRule[]) => void;
  slides: Slide[];
  canTrigger: boolean;
}) {
  const set = (i: number, rule: DraftRule) => onChange(rules.map((r, j) => (j === i ? rule : r)));
  const actions = canTrigger ? ACTIONS : ACTIONS.filter((a) => a.type !== 'trigger-webhook');
  return (
    <fieldset className="logic">
      <legend>Question logic</legend>
      {rules.length === 0 && <p className="muted">No rules: respondents go on to the next slide.</p>}
      {rules.map((rule, i) => {
        const id = `rule-${i}`;
        return (
          <fieldset key={i} className="rule">
            <legend>Rule {i + 1}</legend>
            <label htmlFor={`${id}-match`}>When</label>
            <select
              id={`${id}-match`}
              value={rule.match}
              onChange={(e) => set(i, { ...rule, match: e.target.value as DraftRule['match'] })}
            >
              <option value="any">any condition holds</option>
              <option value="all">all conditions hold</option>
            </select>
            {rule.conditions.map((c, k) => (
              <div key={k} className="condition">
                <label htmlFor={`${id}-op-${k}`}>Condition {k + 1}: the answer</label>
                <select
                  id={`${id}-op-${k}`}
                  value={c.op}
                  onChange={(e) =>
                    set(i, {
                      ...rule,
                      conditions: rule.conditions.map((x, m) =>
                        m === k ? { ...x, op: e.target.value as LogicOp } : x,
                      ),
                    })
                  }
                >
                  {LOGIC_OPS.map((op) => (
                    <option key={op} value={op}>
                      {opLabel(op)}
                    </option>
                  ))}
                </select>
                {c.op !== 'answered' && (
                  <>
                    <label htmlFor={`${id}-value-${k}`} className="sr-only">
                      Condition {k + 1} value
                    </label>
                    <input
                      id={`${id}-value-${k}`}
                      value={c.value}
                      placeholder="value"
                      onChange={(e) =>
                        set(i, {
                          ...rule,
                          conditions: rule.conditions.map((x, m) => (m === k ? { ...x, value: e.target.value } : x)),
                        })
                      }
                    />
                  </>
                )}
                <button
                  type="button"
                  onClick={() => set(i, { ...rule, conditions: rule.conditions.filter((_, m) => m !== k) })}
                >
                  Remove condition {k + 1}
                </button>
              </div>
            ))}
            <button
              type="button"
              onClick={() => set(i, { ...rule, conditions: [...rule.conditions, { op: 'equals', value: '' }] })}
            >
              Add a condition
            </button>
            <label htmlFor={`${id}-action`}>Then</label>
            <select
              id={`${id}-action`}
              value={rule.action.type}
              onChange={(e) => set(i, { ...rule, action: actionOf(e.target.value as LogicAction['type'], slides) })}
            >
              {actions.map((a) => (
                <option key={a.type} value={a.type}>
                  {a.label}
                </option>
              ))}
            </select>
            {rule.action.type === 'skip-to' && (
              <>
                <label htmlFor={`${id}-target`}>Slide to skip to</label>
                <select
                  id={`${id}-target`}
                  value={rule.action.slideId}
                  onChange={(e) => set(i, { ...rule, action: { type: 'skip-to', slideId: e.target.value } })}
                >
                  {slides.length === 0 && <option value="">(no other slides yet)</option>}
                  {slides.map((s) => (
                    <option key={s.id} value={s.id}>
                      {s.idx + 1}. {s.title}
                    </option>
                  ))}
                </select>
              </>
            )}
            {rule.action.type === 'trigger-webhook' && (
              <>
                <label htmlFor={`${id}-url`}>Webhook URL (https)</label>
                <input
                  id={`${id}-url`}
                  type="url"
                  value={rule.action.url}
                  onChange={(e) => set(i, { ...rule, action: { type: 'trigger-webhook', url: e.target.value } })}
                />
              </>
            )}
            <button type="button" className="danger" onClick={() => onChange(rules.filter((_, j) => j !== i))}>
              Remove rule {i + 1}
            </button>
          </fieldset>
        );
      })}
      <button type="button" onClick={() => onChange([...rules, emptyRule()])}>
        Add a logic rule
      </button>
      {!canTrigger && (
        <p className="muted small">A rule that triggers a webhook is added by owners, admins and billing admins.</p>
      )}
    </fieldset>
  );
}
