import { sql, type RawBuilder } from 'kysely';

/** The rules of a jsonb column or key as an array, whatever it holds. */
const rules = (value: RawBuilder<unknown>) =>
  sql`jsonb_array_elements(CASE WHEN jsonb_typeof(${value}) = 'array' THEN ${value} ELSE '[]'::jsonb END)`;

/**
 * True for a delivery `d` of a saved webhook, and for a logic-triggered one whose *Trigger
 * webhook* action still stands: its poll's survey action logic, or its slide's question logic
 * (the slide its endpoint names), holds an action to its URL. A resend or recover sends nothing
 * to an action the customer has removed, as removing it cancels what was queued (README, Webhooks).
 */
export const targetStands = sql<boolean>`(d.webhook_id IS NOT NULL OR CASE d.source
  WHEN 'survey-logic' THEN EXISTS (
    SELECT 1 FROM polls tp, ${rules(sql`tp.body->'actionLogic'`)} r
    WHERE tp.id = d.poll_id AND r->'action'->>'type' = 'trigger-webhook' AND r->'action'->>'url' = d.url)
  ELSE EXISTS (
    SELECT 1 FROM endpoints te JOIN slides ts ON ts.id = te.slide_id COLLATE "C", ${rules(sql`ts.logic`)} r
    WHERE te.id = d.endpoint_id COLLATE "C" AND r->'action'->>'type' = 'trigger-webhook' AND r->'action'->>'url' = d.url)
  END)`;
