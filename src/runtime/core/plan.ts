/** The plan the model keeps for a multi-step request (`update_plan`): a checklist the panel pins above the turn. */
import * as z from 'zod/mini';
import type { PlanItem } from '../../common/conversation';
import type { ToolDefinition } from '../../tools/workspaceTools';

export const PLAN_LIMITS = { items: 20, text: 300 };

export const UPDATE_PLAN: ToolDefinition = {
  name: 'update_plan',
  kind: 'read',
  description:
    'Write or update your plan for a request that takes several steps: the whole checklist each time, each item pending, in_progress or done (one in_progress at a time). The person sees it pinned above your answer. Call it first for any request of three steps or more, and again as items are done.',
  parameters: {
    type: 'object',
    properties: {
      items: {
        type: 'array',
        description: `The checklist, in order (at most ${PLAN_LIMITS.items} items)`,
        items: {
          type: 'object',
          properties: {
            text: { type: 'string', description: 'What the step does, in a short sentence' },
            status: { type: 'string', enum: ['pending', 'in_progress', 'done'] },
          },
          required: ['text', 'status'],
        },
      },
    },
    required: ['items'],
  },
};

const ItemSchema = z.object({
  text: z.string().check(z.minLength(1), z.maxLength(PLAN_LIMITS.text)),
  status: z.enum(['pending', 'in_progress', 'in-progress', 'done', 'completed']),
});
const ArgsSchema = z.object({ items: z.array(ItemSchema).check(z.minLength(1), z.maxLength(PLAN_LIMITS.items)) });

/** The plan in the arguments, or why they are not one (said to the model). */
export function parsePlan(raw: string): { plan: PlanItem[] } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(raw || '{}');
  } catch {
    return { error: 'the arguments are not JSON.' };
  }
  const r = ArgsSchema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    return {
      error: `${issue.path.join('.') || 'items'}: ${issue.message} (a plan has 1 to ${PLAN_LIMITS.items} items, each with text of at most ${PLAN_LIMITS.text} characters and a status of pending, in_progress or done).`,
    };
  }
  return {
    plan: r.data.items.map((i) => ({
      text: i.text.trim(),
      status: i.status === 'in_progress' || i.status === 'in-progress' ? 'in-progress' : i.status === 'completed' ? 'done' : i.status,
    })),
  };
}

/** What the model reads back: where the plan stands. */
export function planSummary(plan: readonly PlanItem[]): string {
  const done = plan.filter((i) => i.status === 'done').length;
  const now = plan.find((i) => i.status === 'in-progress');
  return `Plan updated: ${done} of ${plan.length} done${now ? `; in progress: ${now.text}` : done === plan.length ? '; all done' : ''}.`;
}

/** The plan as a numbered Markdown list, for the message that carries an approved plan out. */
export function planMarkdown(plan: readonly PlanItem[]): string {
  return plan.map((i, n) => `${n + 1}. ${i.text}${i.status === 'done' ? ' (done)' : ''}`).join('\n');
}
