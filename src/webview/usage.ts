/**
 * The Usage view (its own bundle, dist/usage.js): what the host's report says, as cards, a stacked
 * bar chart (Chartist: SVG, styled by the theme's chart colours) with the same figures as a table
 * for screen readers and keyboards, and tables for tokens, models, keys and the costliest calls.
 */
import './language';
import * as l10n from '@vscode/l10n';
import { BarChart } from 'chartist';
import { ToUsageViewSchema, type FromUsageView, type ToUsageView } from '../common/usageProtocol';
import type { UsageReport } from '../common/usageReport';
import { FIX_COMMANDS } from '../common/fixes';
import { formatCost } from '../common/money';
import { HostChannel } from './channel';
import { button, h, icon } from './dom';
import { formatCount, formatDateTime, formatTime } from '../common/locale';

const app = document.getElementById('app')!;
const status = h('p', { id: 'status', class: 'status', role: 'status', 'aria-live': 'polite' });
const rangeButtons = [7, 30].map((d) => button(l10n.t('{0} days', d), { 'data-range': String(d), 'aria-pressed': 'false' }));
const refreshButton = button(l10n.t('Refresh'), { id: 'refresh', title: l10n.t('Read the figures from the gateway again') }, 'refresh');
const exportButton = button(l10n.t('Export CSV'), { id: 'export', title: l10n.t('Save spend per day and model as CSV') }, 'desktop-download');
const heading = h('div', { class: 'heading' }, h('h1', { text: l10n.t('Gateway usage') }), h('span', { id: 'who', class: 'muted' }));
const toolbar = h(
  'div',
  { class: 'toolbar', role: 'toolbar', 'aria-label': l10n.t('Usage view') },
  h('span', { class: 'range', role: 'group', 'aria-label': l10n.t('Period') }, ...rangeButtons),
  refreshButton,
  exportButton,
);
const body = h('div', { id: 'body' });
app.append(heading, toolbar, status, body);

const channel = new HostChannel<ToUsageView, FromUsageView>(ToUsageViewSchema, 'usage');
const post = (m: FromUsageView) => channel.post(m);
const int = formatCount;
const SERIES_CLASSES = ['a', 'b', 'c', 'd', 'e', 'f'];
const seriesClass = (name: string, i: number) => (name === 'Other' ? 'other' : (SERIES_CLASSES[i] ?? 'other'));

toolbar.addEventListener('click', (e) => {
  const b = (e.target as HTMLElement).closest('button');
  if (!b) return;
  const days = Number(b.dataset.range);
  if (days === 7 || days === 30) post({ type: 'range', days });
  else if (b === refreshButton) post({ type: 'refresh' });
  else if (b === exportButton) post({ type: 'export' });
});
body.addEventListener('click', (e) => {
  const b = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-fix]');
  const command = FIX_COMMANDS.find((c) => c === b?.dataset.fix);
  if (command) post({ type: 'fix', command });
});

function card(label: string, value: string, detail?: string, id?: string): HTMLElement {
  return h(
    'div',
    { class: 'card', ...(id ? { id } : {}) },
    h('div', { class: 'card-label', text: label }),
    h('div', { class: 'card-value', text: value }),
    detail ? h('div', { class: 'card-detail muted', text: detail }) : undefined,
  );
}

function table(caption: string, head: string[], rows: (string | number)[][], numeric: number[] = []): HTMLElement {
  const t = h(
    'table',
    {},
    h('caption', { text: caption }),
    h('thead', {}, h('tr', {}, ...head.map((c, i) => h('th', { scope: 'col', class: numeric.includes(i) ? 'num' : undefined, text: c })))),
  );
  const tb = h('tbody');
  for (const r of rows)
    tb.append(
      h(
        'tr',
        {},
        ...r.map((c, i) => h(i === 0 ? 'th' : 'td', { ...(i === 0 ? { scope: 'row' } : {}), class: numeric.includes(i) ? 'num' : undefined, text: String(c) })),
      ),
    );
  t.append(tb);
  return h('div', { class: 'table-wrap' }, t);
}

function section(title: string, ...children: (Node | undefined)[]): HTMLElement {
  return h('section', {}, h('h2', { text: title }), ...children);
}

/** Axis steps: cents when the days reach ten cents, finer below. */
function axisMoney(v: number, peak: number): string {
  return `$${v.toFixed(peak >= 0.1 ? 2 : peak >= 0.01 ? 3 : 4)}`;
}

function shortDay(day: string): string {
  return day.slice(5);
}

let chart: BarChart | undefined;
let drawn: { report: UsageReport; host: HTMLElement } | undefined;

function drawChart(r: UsageReport, host: HTMLElement): void {
  chart?.detach();
  drawn = { report: r, host };
  const labels = r.days.map(shortDay);
  const peak = Math.max(...r.dailyTotals);
  const every = r.days.length > 14 ? 5 : 1;
  const unknown = new Set(r.unknownDays);
  // Unknown days are gaps (null), not zero-height bars.
  const data = {
    labels,
    series: r.series.map((s, i) => ({
      name: s.name,
      data: s.dollars.map((d, j) => (unknown.has(r.days[j]) ? null : d)),
      className: `ct-series ct-series-${seriesClass(s.name, i)}`,
    })),
  };
  // Bars as wide as the days allow (set through CSSOM: the view's CSP allows no inline style attributes).
  host.style.setProperty('--bar-width', `${Math.max(4, Math.min(36, Math.floor((host.clientWidth - 60) / r.days.length) - 6))}px`);
  chart = new BarChart(host, data, {
    stackBars: true,
    height: '240px',
    chartPadding: { top: 16, right: 8, bottom: 0, left: 8 },
    axisX: { showGrid: false, labelInterpolationFnc: (v: unknown, i: number) => ((r.days.length - 1 - i) % every === 0 ? String(v) : null) },
    axisY: { labelInterpolationFnc: (v: unknown) => axisMoney(Number(v), peak), offset: 56 },
  });
  chart.on('draw', (d: { type: string; element: { getNode(): Element }; seriesIndex?: number; index?: number; value?: { y?: number } }) => {
    if (d.type !== 'bar' || d.seriesIndex === undefined || d.index === undefined) return;
    const t = document.createElementNS('http://www.w3.org/2000/svg', 'title');
    t.textContent = `${r.days[d.index]} · ${r.series[d.seriesIndex].name}: ${formatCost(d.value?.y ?? 0)}`;
    d.element.getNode().append(t);
  });
}

function chartSection(r: UsageReport): HTMLElement {
  if (r.empty) {
    return section(
      l10n.t('Spend per day'),
      h('p', {
        id: 'no-data',
        class: 'empty',
        text: l10n.t("No usage recorded in the last {0} days: the gateway's log has no billed calls in this period.", r.rangeDays),
      }),
    );
  }
  const peak = r.dailyTotals.reduce((best, d, i) => (d > r.dailyTotals[best] ? i : best), 0);
  const host = h('div', {
    id: 'chart',
    class: 'chart',
    role: 'img',
    'aria-label': l10n.t(
      'Spend per day over the last {0} days, stacked by model: {1} in all, most on {2} ({3}). The table below has every figure.',
      r.rangeDays,
      formatCost(r.totalDollars),
      r.days[peak],
      formatCost(r.dailyTotals[peak]),
    ),
  });
  const legend = h(
    'ul',
    { class: 'legend', 'aria-label': l10n.t('Models in the chart') },
    ...r.series.map((s, i) => h('li', {}, h('span', { class: `swatch s-${seriesClass(s.name, i)}`, 'aria-hidden': 'true' }), s.name)),
  );
  const asTable = h(
    'details',
    { class: 'as-table' },
    h('summary', { text: l10n.t('Show the chart as a table') }),
    table(
      l10n.t('Spend per day by model'),
      [l10n.t('Day'), ...r.series.map((s) => s.name), l10n.t('Total')],
      r.days.map((day, i) =>
        r.unknownDays.includes(day)
          ? [day, ...r.series.map(() => l10n.t('no data')), l10n.t('no data')]
          : [day, ...r.series.map((s) => formatCost(s.dollars[i])), formatCost(r.dailyTotals[i])],
      ),
      r.series.map((_, i) => i + 1).concat(r.series.length + 1),
    ),
  );
  requestAnimationFrame(() => drawChart(r, host));
  return section(l10n.t('Spend per day by model'), host, legend, asTable);
}

/** What an API key alone shows: its own totals, and how to see the whole account. */
function keyOnlyParts(r: UsageReport): Node[] {
  const parts: Node[] = [];
  const k = r.key!;
  parts.push(
    h(
      'div',
      { class: 'cards' },
      card(l10n.t('Used on this key'), formatCost(k.usedDollars), l10n.t('since the key was made')),
      card(l10n.t('Key limit'), k.unlimited ? l10n.t('Unlimited') : formatCost(k.limitDollars ?? 0)),
      card(l10n.t('Left on this key'), k.unlimited ? l10n.t('Unlimited') : formatCost(k.remainingDollars ?? 0)),
      card(l10n.t('Key expires'), k.accessUntil ? new Date(k.accessUntil * 1000).toISOString().slice(0, 10) : l10n.t('Never')),
    ),
    h(
      'p',
      { class: 'note' },
      icon('info'),
      h(
        'span',
        {},
        `${r.source} `,
        h('button', { type: 'button', class: 'link', 'data-fix': 'modelGateway.setAccessToken', text: l10n.t('Set Access Token') }),
      ),
    ),
  );
  return parts;
}

/** Busy models the chat and the other surfaces left for the next of their chain, per model and day. */
function fallbackSection(r: UsageReport): Node[] {
  if (!r.fallbacks?.length) return [];
  return [
    section(
      l10n.t('Fallbacks'),
      table(
        l10n.t('Times a busy model was left for the next of its chain (counted by Model Gateway)'),
        [l10n.t('Model'), l10n.t('Fallbacks'), l10n.t('By day')],
        r.fallbacks.map((f) => [f.model, int(f.total), f.byDay.map((d) => `${shortDay(d.day)}: ${int(d.count)}`).join(', ')]),
        [1],
      ),
    ),
  ];
}

/** The tables below the chart: other callers, inline completions, fallbacks, keys, recent and costliest calls. */
function tableSections(r: UsageReport): Node[] {
  const parts: Node[] = [];
  if (r.otherCallers) {
    const o = r.otherCallers;
    parts.push(
      section(
        l10n.t("Other extensions and VS Code's chat"),
        table(
          l10n.t("Spend through VS Code's language-model API today"),
          [l10n.t('Today'), l10n.t('Daily cap'), l10n.t('Left')],
          [[formatCost(o.dollars), formatCost(o.capDollars), formatCost(Math.max(0, o.capDollars - o.dollars))]],
          [0, 1, 2],
        ),
      ),
    );
  }
  if (r.completions) {
    const c = r.completions;
    parts.push(
      section(
        l10n.t('Inline completions'),
        table(
          l10n.t('Inline completions today (counted by Model Gateway)'),
          [l10n.t('Today'), l10n.t('Daily cap'), l10n.t('Left'), l10n.t('Requests'), l10n.t('Characters accepted')],
          [[formatCost(c.dollars), formatCost(c.capDollars), formatCost(Math.max(0, c.capDollars - c.dollars)), int(c.requests), int(c.accepted)]],
          [0, 1, 2, 3, 4],
        ),
      ),
    );
  }
  parts.push(...fallbackSection(r));
  if (r.perKey.length)
    parts.push(
      section(
        l10n.t('By API key'),
        table(
          l10n.t('Spend by API key (as the log names them)'),
          [l10n.t('Key'), l10n.t('Requests'), l10n.t('Spend')],
          r.perKey.map((k) => [k.name, int(k.requests), formatCost(k.dollars)]),
          [1, 2],
        ),
      ),
    );
  if (r.recentCalls?.length) {
    parts.push(
      section(
        l10n.t('Recent calls'),
        table(
          l10n.t('The newest calls of this key'),
          [l10n.t('When'), l10n.t('Model'), l10n.t('Tokens in / out'), l10n.t('Cost')],
          r.recentCalls.map((c) => [formatDateTime(c.at * 1000), c.model, `${int(c.promptTokens)} / ${int(c.completionTokens)}`, formatCost(c.dollars)]),
          [2, 3],
        ),
      ),
    );
  }
  if (r.topCalls.length) {
    parts.push(
      section(
        l10n.t('Costliest calls'),
        table(
          l10n.t('The most expensive calls of the period'),
          [l10n.t('When'), l10n.t('Model'), l10n.t('Key'), l10n.t('Tokens in / out'), l10n.t('Cost')],
          r.topCalls.map((c) => [
            formatDateTime(c.at * 1000),
            c.model,
            c.keyName,
            `${int(c.promptTokens)} / ${int(c.completionTokens)}`,
            formatCost(c.dollars),
          ]),
          [3, 4],
        ),
      ),
    );
  }
  return parts;
}

function render(r: UsageReport): void {
  app.setAttribute('aria-busy', 'false');
  for (const b of rangeButtons) b.setAttribute('aria-pressed', String(Number(b.dataset.range) === r.rangeDays));
  exportButton.disabled = r.mode !== 'full';
  // The key's totals have no period: the range buttons would change nothing.
  rangeButtons[0].parentElement!.hidden = r.mode !== 'full';
  const who = document.getElementById('who')!;
  const parts: Node[] = [];
  if (r.mode === 'key-only') {
    who.textContent = l10n.t('API key only: the key’s own totals');
    body.replaceChildren(...keyOnlyParts(r), ...fallbackSection(r));
    return;
  }
  const keyScope = r.scope === 'key';
  who.textContent = keyScope
    ? `${r.keyName ? l10n.t('API key “{0}”', r.keyName) : l10n.t('This API key')} · ${r.key?.unlimited ? l10n.t('unlimited') : l10n.t('{0} left on the key', formatCost(r.key?.remainingDollars ?? 0))}`
    : `${r.username ?? ''}${r.balanceDollars !== undefined ? ` · ${l10n.t('balance {0}', formatCost(r.balanceDollars))}` : ''}`;
  const f = r.forecast;
  // An unlimited key never runs out, whatever it spends.
  const lasts =
    keyScope && r.key?.unlimited
      ? l10n.t('Unlimited')
      : !f
        ? '—'
        : Number.isFinite(f.daysLeft)
          ? f.daysLeft < 1
            ? l10n.t('< 1 day')
            : l10n.t('{0} days', Math.floor(f.daysLeft))
          : l10n.t('No recent spend');
  const t = r.tokens;
  parts.push(
    h(
      'div',
      { class: 'cards' },
      card(
        l10n.t('Spent, last {0} days', r.rangeDays),
        formatCost(r.totalDollars),
        r.unknownDays.length
          ? l10n.t('{0} requests · {1} of {2} days known', int(r.requests), r.rangeDays - r.unknownDays.length, r.rangeDays)
          : l10n.t('{0} requests', int(r.requests)),
        'total',
      ),
      card(l10n.t('Today'), formatCost(r.todayDollars), undefined, 'today'),
      card(
        keyScope ? l10n.t('Key quota lasts') : l10n.t('Balance lasts'),
        lasts,
        f && Number.isFinite(f.daysLeft) ? l10n.t('at {0} a day (last {1} days)', formatCost(f.ratePerDay), f.basisDays) : undefined,
        'forecast',
      ),
      card(
        l10n.t('Cache hit rate'),
        t.hitRate === undefined ? '—' : `${(t.hitRate * 100).toFixed(1)}%`,
        t.hitRate === undefined ? l10n.t('no cache reads or writes in the log') : l10n.t('{0} tokens read from the cache', int(t.cacheRead)),
      ),
    ),
    chartSection(r),
    section(
      l10n.t('Tokens'),
      table(
        l10n.t('Tokens in the period'),
        [l10n.t('Kind'), l10n.t('Tokens')],
        [
          [l10n.t('Input (uncached)'), int(t.input)],
          [l10n.t('Output'), int(t.output)],
          [l10n.t('Cache read'), int(t.cacheRead)],
          [l10n.t('Cache write'), int(t.cacheWrite)],
        ],
        [1],
      ),
    ),
    section(
      l10n.t('By model'),
      table(
        l10n.t('Spend by model'),
        [l10n.t('Model'), l10n.t('Requests'), l10n.t('Spend'), l10n.t('Price')],
        r.perModel.map((m) => [m.model, int(m.requests), formatCost(m.dollars), m.price]),
        [1, 2],
      ),
    ),
  );
  parts.push(...tableSections(r));
  parts.push(
    h('p', { class: 'note muted' }, icon('info'), ` ${r.source}${r.sampleNote ? ` ${r.sampleNote}` : ''} ${l10n.t('Updated {0}.', formatTime(r.generatedAt))}`),
  );
  if (keyScope) {
    parts.push(
      h(
        'p',
        { class: 'note muted' },
        h(
          'span',
          {},
          `${l10n.t('For the whole account (every key, the balance), set the system access token.')} `,
          h('button', { type: 'button', class: 'link', 'data-fix': 'modelGateway.setAccessToken', text: l10n.t('Set Access Token') }),
        ),
      ),
    );
  }
  body.replaceChildren(...parts);
}

channel.listen((m) => {
  switch (m.type) {
    case 'loading':
      app.setAttribute('aria-busy', 'true');
      status.textContent = l10n.t('Reading the last {0} days from the gateway…', m.rangeDays);
      break;
    case 'report':
      status.textContent = '';
      render(m.report);
      break;
    case 'error': {
      app.setAttribute('aria-busy', 'false');
      status.textContent = '';
      // Figures already on screen stay (marked as not refreshed) under the error.
      const shown = body.querySelector('.cards') !== null;
      const card = h(
        'div',
        { class: 'error', role: 'alert' },
        icon('error'),
        h(
          'div',
          { class: 'error-body' },
          h('strong', { text: shown ? l10n.t('The figures below could not be refreshed.') : l10n.t('The usage could not be read.') }),
          h('p', { text: m.message }),
          h('div', { class: 'fixes' }, ...m.fixes.map((f) => h('button', { type: 'button', class: 'primary', 'data-fix': f.command, text: f.title }))),
        ),
      );
      body.querySelector('.error')?.remove();
      if (shown) body.prepend(card);
      else body.replaceChildren(card);
      break;
    }
    case 'exported':
      status.textContent = l10n.t('Exported {0} rows to {1}.', m.rows, m.file);
      break;
  }
});

let resizeTimer: ReturnType<typeof setTimeout> | undefined;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    if (drawn?.host.isConnected) drawChart(drawn.report, drawn.host);
  }, 150);
});

post({ type: 'ready' });
