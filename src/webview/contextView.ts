/**
 * The context window in the view: the meter (used / window, what takes the room, what was
 * shortened to fit), its Condense button, and the cards that show where older turns were
 * condensed and what the summary says.
 */
import * as l10n from '@vscode/l10n';
import type { ContextUse } from '../common/contextUse';
import type { AssistantTurn, Turn } from '../common/conversation';
import type { ViewCondensation } from '../common/chatProtocol';
import { button, h, icon } from './dom';
import { renderMarkdown } from './markdown';
import { formatCost } from '../common/money';
import { formatCount } from '../common/locale';

const k = (n: number) => (n >= 10_000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n));

const meterFill = h('span', { class: 'meter-fill' });
const meterText = h('span', { class: 'meter-text' });
const meterGauge = h(
  'span',
  { class: 'meter-gauge', role: 'meter', 'aria-label': l10n.t('Context window used'), 'aria-valuemin': '0' },
  h('span', { class: 'meter-bar' }, meterFill),
  meterText,
);
export const condenseButton = button(
  l10n.t('Condense'),
  { id: 'condense', class: 'link', title: l10n.t('Summarise older turns with the model, so that less is sent from now on (the conversation stays whole)') },
  'fold',
);
const costText = h('span', { class: 'meter-cost', hidden: true });
export const meter = h('div', { id: 'context-meter', class: 'meter', hidden: true }, meterGauge, costText, condenseButton);
/** The project's rules files the last request carried, each with its cost in tokens. */
export const rulesRow = h('div', { id: 'rules-in-use', class: 'rules-row', hidden: true, 'aria-label': l10n.t('Project rules in use') });

/** What the conversation has cost so far (answers with a known price), and what the cache saved. */
export function renderConversationCost(turns: readonly Turn[]): void {
  const answers = turns.filter((t): t is AssistantTurn => t.role === 'assistant' && !!t.cost);
  const priced = answers.filter((t) => t.cost?.dollars !== undefined);
  costText.hidden = answers.length === 0;
  if (answers.length === 0) return;
  const total = priced.reduce((n, t) => n + (t.cost?.dollars ?? 0), 0);
  const saved = priced.reduce((n, t) => n + (t.cost?.savedDollars ?? 0), 0);
  const estimated = priced.some((t) => t.cost?.estimated);
  const unpriced = answers.length - priced.length;
  costText.textContent =
    priced.length === 0
      ? l10n.t('cost unknown')
      : `${estimated ? '~' : ''}${formatCost(total)}${unpriced ? '+' : ''}${saved > 0 ? ` · ${l10n.t('saved {0}', formatCost(saved))}` : ''}`;
  costText.title = [
    estimated
      ? l10n.t('This conversation: {0} for {1} answer(s) with a known price (some estimated: the gateway sent no usage).', formatCost(total), priced.length)
      : l10n.t('This conversation: {0} for {1} answer(s) with a known price.', formatCost(total), priced.length),
    saved > 0 ? l10n.t('Prompt caching saved {0}.', formatCost(saved)) : '',
    unpriced ? l10n.t('{0} answer(s) from models with no price (set one in modelGateway.prices) are not counted.', unpriced) : '',
  ]
    .filter(Boolean)
    .join('\n');
}

/** The meter: used / window, what takes the room, and what was shortened or condensed to fit. */
export function renderMeter(use: ContextUse | undefined, hasTurns: boolean): void {
  meter.hidden = !use;
  condenseButton.hidden = !hasTurns;
  renderRules(use?.rules ?? []);
  if (!use) return;
  const share = Math.min(1, use.used / use.window);
  meterFill.style.width = `${(share * 100).toFixed(1)}%`;
  meter.classList.toggle('warn', share > 0.8);
  const shortened = [
    use.condensedTurns && l10n.t('{0} earlier message(s) sent as a summary', use.condensedTurns),
    use.cut && l10n.t('{0} long result(s) cut', use.cut),
    use.stubbed && l10n.t('{0} older result(s) left out', use.stubbed),
    use.omittedTurns && l10n.t('{0} earlier message(s) left out', use.omittedTurns),
  ].filter(Boolean);
  meterText.textContent =
    l10n.t('{0} / {1} tokens', k(use.used), k(use.window)) +
    (use.condensedTurns ? ` · ${l10n.t('condensed')}` : shortened.length ? ` · ${l10n.t('shortened to fit')}` : '');
  meterGauge.setAttribute('aria-valuemax', String(use.window));
  meterGauge.setAttribute('aria-valuenow', String(use.used));
  const p = use.parts;
  const rulesTokens = (use.rules ?? []).reduce((n, r) => n + r.tokens, 0);
  meter.title = [
    use.reported
      ? l10n.t('Context window: {0} of {1} tokens (as the gateway counted the last request)', formatCount(use.used), formatCount(use.window))
      : l10n.t('Context window: {0} of {1} tokens (estimated)', formatCount(use.used), formatCount(use.window)),
    l10n.t(
      'system {0} · rules {1} · tools {2} · messages {3} · tool results {4} · images {5}',
      k(Math.max(0, p.system - rulesTokens)),
      k(rulesTokens),
      k(p.tools),
      k(p.history),
      k(p.toolResults),
      k(p.images),
    ),
    ...(use.toolsOffered !== undefined
      ? [
          use.toolsDeferred
            ? l10n.t('{0} tools sent with each request; {1} more are found when needed (find_tools).', use.toolsOffered, use.toolsDeferred)
            : l10n.t('{0} tools sent with each request.', use.toolsOffered),
        ]
      : []),
    ...(shortened.length ? [l10n.t('To fit: {0} (only in what is sent; the conversation keeps everything).', shortened.join(', '))] : []),
  ].join('\n');
}

function renderRules(rules: readonly { path: string; tokens: number; memory?: boolean }[]): void {
  rulesRow.hidden = rules.length === 0;
  const memoryOnly = rules.every((r) => r.memory);
  rulesRow.replaceChildren(
    h('span', { class: 'muted', text: memoryOnly ? l10n.t('Memory:') : l10n.t('Rules:') }),
    ...rules.map((r) =>
      r.memory
        ? h(
            'span',
            {
              class: 'chip rule memory',
              title: l10n.t('{0}: remembered facts in the system prompt, about {1} tokens (Model Gateway: Edit Memory)', r.path, formatCount(r.tokens)),
            },
            icon('notebook'),
            ` ${r.path} · ${k(r.tokens)}`,
          )
        : h(
            'span',
            {
              class: 'chip rule',
              title: l10n.t('{0}: in the system prompt, about {1} tokens (setting: modelGateway.chat.projectRules)', r.path, formatCount(r.tokens)),
            },
            icon('book'),
            ` ${r.path.length <= 32 ? r.path : r.path.slice(r.path.lastIndexOf('/') + 1)} · ${k(r.tokens)}`,
          ),
    ),
  );
}

/** Condense pressed: the button says so until the host answers. */
export function setCondensing(on: boolean): void {
  condenseButton.disabled = on;
  condenseButton.replaceChildren(icon(on ? 'loading' : 'fold'), on ? ' Condensing…' : ' Condense');
  condenseButton.classList.toggle('busy', on);
}

function card(c: ViewCondensation): HTMLElement {
  const earlier =
    c.throughSteps !== undefined
      ? c.manual
        ? l10n.t('Earlier messages and the steps of this answer above condensed by hand: {0} → {1} tokens.', k(c.tokensBefore), k(c.tokensAfter))
        : l10n.t(
            'Earlier messages and the steps of this answer above condensed to fit the context window: {0} → {1} tokens.',
            k(c.tokensBefore),
            k(c.tokensAfter),
          )
      : c.manual
        ? l10n.t('Earlier messages condensed by hand: {0} → {1} tokens.', k(c.tokensBefore), k(c.tokensAfter))
        : l10n.t('Earlier messages condensed to fit the context window: {0} → {1} tokens.', k(c.tokensBefore), k(c.tokensAfter));
  const body = h('div', { class: 'markdown condensed-summary' });
  body.innerHTML = renderMarkdown(c.summary);
  return h(
    'details',
    { class: 'condensed', 'data-condensation': c.id },
    h(
      'summary',
      {},
      icon('fold'),
      ` ${earlier} `,
      h('span', { class: 'muted when-closed', text: l10n.t('Show summary') }),
      h('span', { class: 'muted when-open', text: l10n.t('Hide summary') }),
    ),
    body,
    h('p', {
      class: 'muted',
      text: l10n.t('From here on, {0} gets this summary instead of what is above it; that stays here and in the saved conversation.', c.model),
    }),
  );
}

/**
 * Puts each condensation's card right after what it covers: after the turn it ends with, or inside
 * an answer after its last covered step (a long agent loop condensed mid-answer). Turns not drawn
 * get none.
 */
export function placeCondensations(thread: HTMLElement, list: readonly ViewCondensation[]): void {
  const wanted = new Set(list.map((c) => c.id));
  for (const el of Array.from(thread.querySelectorAll<HTMLElement>('.condensed'))) if (!wanted.has(el.dataset.condensation ?? '')) el.remove();
  for (const c of list) {
    const turn = thread.querySelector(`:scope > [data-turn="${CSS.escape(c.throughTurnId)}"]`);
    const after = turn && c.throughSteps !== undefined ? (turn.querySelectorAll(':scope .steps > .step')[c.throughSteps - 1] ?? turn) : turn;
    const existing = thread.querySelector<HTMLElement>(`.condensed[data-condensation="${CSS.escape(c.id)}"]`);
    if (!after) {
      existing?.remove();
      continue;
    }
    const el = existing ?? card(c);
    if (after.nextElementSibling !== el) after.after(el);
  }
}
