/** A subagent's run under its `run_subagent` card: its line in view, its own steps folded. */
import * as l10n from '@vscode/l10n';
import type { AssistantTurn, SubagentRun, ToolCallRecord } from '../common/conversation';
import { formatCount } from '../common/locale';
import { formatCost } from '../common/money';
import { h, icon } from './dom';
import { fallbackText } from './fallbackView';

const STATUS_ICON: Record<SubagentRun['status'], string> = { queued: 'clock', running: 'loading~spin', done: 'check', stopped: 'debug-stop', error: 'error' };

function statusText(run: SubagentRun): string {
  switch (run.status) {
    case 'queued':
      return l10n.t('waiting for a free slot');
    case 'running':
      return l10n.t('running');
    case 'done':
      return run.ms !== undefined ? l10n.t('done in {0} s', (run.ms / 1000).toFixed(1)) : l10n.t('done');
    case 'stopped':
      return l10n.t('stopped');
    case 'error':
      return l10n.t('failed');
  }
}

/** Its requests, tokens and cost, as one line ("3 requests · 2,140 tokens · $0.0012"). */
export function subagentFigures(run: SubagentRun): string {
  const u = run.usage;
  const parts = [run.steps.length === 1 ? l10n.t('1 request') : l10n.t('{0} requests', run.steps.length)];
  if (u.input + u.output > 0) parts.push(l10n.t('{0} tokens', `${u.estimated ? '~' : ''}${formatCount(u.input + u.output)}`));
  if (run.cost?.dollars !== undefined) parts.push(run.cost.estimated ? l10n.t('~{0} (estimate)', formatCost(run.cost.dollars)) : formatCost(run.cost.dollars));
  else if (run.cost) parts.push(l10n.t('cost unknown (no price for this model)'));
  return parts.join(' · ');
}

function callLine(c: ToolCallRecord): HTMLElement {
  let arg = '';
  try {
    const a = JSON.parse(c.args) as Record<string, unknown>;
    const v = a.path ?? a.query ?? a.pattern ?? Object.values(a)[0];
    if (typeof v === 'string') arg = v.length > 60 ? `${v.slice(0, 60)}…` : v;
  } catch {
    // Arguments cut for the view: the name alone.
  }
  return h(
    'li',
    { class: `subagent-call ${c.status}` },
    h('code', { text: c.name }),
    arg ? ` ${arg}` : '',
    c.isError ? h('span', { class: 'muted', text: ` — ${l10n.t('failed')}` }) : '',
  );
}

/** The line under the card (always in view) and its steps folded. */
export function subagentView(run: SubagentRun): HTMLElement {
  const steps = h(
    'details',
    { class: 'subagent-steps' },
    h('summary', { text: l10n.t('Its steps ({0})', run.steps.length) }),
    h('div', { class: 'label', text: l10n.t('Task') }),
    h('pre', { text: run.task }),
    ...run.steps.map((s, i) =>
      h(
        'div',
        { class: 'subagent-step' },
        h('div', { class: 'label', text: l10n.t('Request {0}', i + 1) }),
        s.text.trim() && h('div', { class: 'subagent-text', text: s.text.length > 600 ? `${s.text.slice(0, 600)}…` : s.text }),
        s.toolCalls.length > 0 && h('ul', {}, ...s.toolCalls.map(callLine)),
      ),
    ),
  );
  return h(
    'div',
    { class: `subagent ${run.status}`, 'data-subagent': run.label },
    h(
      'div',
      { class: 'subagent-line' },
      icon(STATUS_ICON[run.status]),
      ' ',
      h('b', { text: run.label }),
      h('span', { class: 'muted', text: ` · ${run.model} · ${statusText(run)} · ${subagentFigures(run)}` }),
    ),
    run.fallbacks?.length
      ? h(
          'div',
          { class: 'fallback-line muted', role: 'note' },
          icon('arrow-swap'),
          ' ',
          h('span', { text: fallbackText(run.fallbacks, run.model, run.status) }),
        )
      : '',
    run.error ? h('div', { class: 'subagent-error', text: run.error }) : '',
    steps,
  );
}

/** The subagents' tokens and cost, added to the answer's line when it had any. */
export function subagentsLine(t: AssistantTurn): string {
  const runs = t.steps.flatMap((s) => s.toolCalls.flatMap((c) => (c.subagent ? [c.subagent] : [])));
  if (runs.length === 0) return '';
  const tokens = runs.reduce((n, r) => n + r.usage.input + r.usage.output, 0);
  const dollars = runs.reduce((n, r) => n + (r.cost?.dollars ?? 0), 0);
  return runs.length === 1
    ? l10n.t('1 subagent: {0} tokens, {1}', formatCount(tokens), formatCost(dollars))
    : l10n.t('{0} subagents: {1} tokens, {2}', runs.length, formatCount(tokens), formatCost(dollars));
}
