/**
 * The context window in the view: the meter (used / window, what takes the room, what was
 * shortened to fit), its Condense button, and the cards that show where older turns were
 * condensed and what the summary says.
 */
import type { ContextUse } from '../common/contextUse';
import type { AssistantTurn, Turn } from '../common/conversation';
import type { ViewCondensation } from '../common/chatProtocol';
import { button, h, icon } from './dom';
import { renderMarkdown } from './markdown';
import { formatCost } from '../common/money';
import { displayLocale } from '../common/locale';

const k = (n: number) => (n >= 10_000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n));

const meterFill = h('span', { class: 'meter-fill' });
const meterText = h('span', { class: 'meter-text' });
const meterGauge = h('span', { class: 'meter-gauge', role: 'meter', 'aria-label': 'Context window used', 'aria-valuemin': '0' }, h('span', { class: 'meter-bar' }, meterFill), meterText);
export const condenseButton = button('Condense', { id: 'condense', class: 'link', title: 'Summarise older turns with the model, so that less is sent from now on (the conversation stays whole)' }, 'fold');
const costText = h('span', { class: 'meter-cost', hidden: true });
export const meter = h('div', { id: 'context-meter', class: 'meter', hidden: true }, meterGauge, costText, condenseButton);
/** The project's rules files the last request carried, each with its cost in tokens. */
export const rulesRow = h('div', { id: 'rules-in-use', class: 'rules-row', hidden: true, 'aria-label': 'Project rules in use' });

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
  costText.textContent = priced.length === 0 ? 'cost unknown' : `${estimated ? '~' : ''}${formatCost(total)}${unpriced ? '+' : ''}${saved > 0 ? ` · saved ${formatCost(saved)}` : ''}`;
  costText.title = [
    `This conversation: ${formatCost(total)} for ${priced.length} answer(s) with a known price${estimated ? ' (some estimated: the gateway sent no usage)' : ''}.`,
    saved > 0 ? `Prompt caching saved ${formatCost(saved)}.` : '',
    unpriced ? `${unpriced} answer(s) from models with no price (set one in modelGateway.prices) are not counted.` : '',
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
    use.condensedTurns && `${use.condensedTurns} earlier message(s) sent as a summary`,
    use.cut && `${use.cut} long result(s) cut`,
    use.stubbed && `${use.stubbed} older result(s) left out`,
    use.omittedTurns && `${use.omittedTurns} earlier message(s) left out`,
  ].filter(Boolean);
  meterText.textContent = `${k(use.used)} / ${k(use.window)} tokens${use.condensedTurns ? ' · condensed' : shortened.length ? ' · shortened to fit' : ''}`;
  meterGauge.setAttribute('aria-valuemax', String(use.window));
  meterGauge.setAttribute('aria-valuenow', String(use.used));
  const p = use.parts;
  meter.title = [
    `Context window: ${use.used.toLocaleString(displayLocale())} of ${use.window.toLocaleString(displayLocale())} tokens (${use.reported ? 'as the gateway counted the last request' : 'estimated'})`,
    `system ${k(p.system)} · tools ${k(p.tools)} · messages ${k(p.history)} · tool results ${k(p.toolResults)} · images ${k(p.images)}`,
    ...(shortened.length ? [`To fit: ${shortened.join(', ')} (only in what is sent; the conversation keeps everything).`] : []),
  ].join('\n');
}

function renderRules(rules: readonly { path: string; tokens: number }[]): void {
  rulesRow.hidden = rules.length === 0;
  rulesRow.replaceChildren(
    h('span', { class: 'muted', text: 'Rules:' }),
    ...rules.map((r) => h('span', { class: 'chip rule', title: `${r.path}: in the system prompt, about ${r.tokens.toLocaleString(displayLocale())} tokens (setting: modelGateway.chat.projectRules)` }, icon('book'), ` ${r.path.length <= 32 ? r.path : r.path.slice(r.path.lastIndexOf('/') + 1)} · ${k(r.tokens)}`)),
  );
}

/** Condense pressed: the button says so until the host answers. */
export function setCondensing(on: boolean): void {
  condenseButton.disabled = on;
  condenseButton.replaceChildren(icon(on ? 'loading' : 'fold'), on ? ' Condensing…' : ' Condense');
  condenseButton.classList.toggle('busy', on);
}

function card(c: ViewCondensation): HTMLElement {
  const how = c.manual ? 'condensed by hand' : 'condensed to fit the context window';
  const inAnswer = c.throughSteps !== undefined ? ` and the steps of this answer above` : '';
  const body = h('div', { class: 'markdown condensed-summary' });
  body.innerHTML = renderMarkdown(c.summary);
  return h(
    'details',
    { class: 'condensed', 'data-condensation': c.id },
    h('summary', {}, icon('fold'), ` Earlier messages${inAnswer} ${how}: ${k(c.tokensBefore)} → ${k(c.tokensAfter)} tokens. `, h('span', { class: 'muted when-closed', text: 'Show summary' }), h('span', { class: 'muted when-open', text: 'Hide summary' })),
    body,
    h('p', { class: 'muted', text: `From here on, ${c.model} gets this summary instead of what is above it; that stays here and in the saved conversation.` }),
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
