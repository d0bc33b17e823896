/**
 * The Usage view's figures, built from what the gateway reported: spend per day stacked by model,
 * tokens and the cache hit rate, requests, per key, the most expensive calls, and the forecast.
 * Pure: the view, the CSV and the tests all read the same report.
 */
import type { KeyBilling, UsageBucket, UsageLogEntry, UsageLogs } from '../../common/usageTypes';
import { forecast } from './forecast';
import { imageFamilyPrice, priceText, type PriceBook } from '../../common/prices';
import { toCsv } from './csv';
import { COMPLETIONS_SERIES, MCP_SERIES_PREFIX, type CompletionSpendByDay, type RangeDays, type UsageReport } from '../../common/usageReport';
import * as l10n from '@vscode/l10n';
import { formatCount } from '../../common/locale';

export { RANGES, type ModelRow, type RangeDays, type UsageReport } from '../../common/usageReport';

/** Series beyond this many models are drawn together as "Other". */
const MAX_SERIES = 6;
/** The series of the models beyond the named ones (read when the report is made: the display language is set by then). */
const otherSeries = (): string => l10n.t('Other');

export function localDay(unixSeconds: number): string {
  const d = new Date(unixSeconds * 1000);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

function nextDay(day: string): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return localDay(new Date(y, m - 1, d + 1, 12).getTime() / 1000);
}

/** The `n` local days ending today, oldest first. */
export function lastDays(n: number, nowMs: number): string[] {
  const out: string[] = [];
  const d = new Date(nowMs);
  for (let i = n - 1; i >= 0; i--) out.push(localDay(new Date(d.getFullYear(), d.getMonth(), d.getDate() - i, 12).getTime() / 1000));
  return out;
}

/** Unix seconds at local midnight `n - 1` days before today (the start of an `n`-day range). */
export function rangeStart(n: number, nowMs: number): number {
  const d = new Date(nowMs);
  return Math.floor(new Date(d.getFullYear(), d.getMonth(), d.getDate() - (n - 1)).getTime() / 1000);
}

export interface ReportInput {
  rangeDays: RangeDays;
  nowMs: number;
  logs: UsageLogs;
  /** Day-by-model spend when the log was not read whole (new-api hourly buckets, one-api's dashboard). */
  buckets?: { buckets: UsageBucket[]; source: 'hourly' | 'daily-7' };
  prices: PriceBook;
  balanceDollars?: number;
  username?: string;
  /** Inline completions' spend as counted here: moved out of its model's figures into a series of its own. */
  completions?: CompletionSpendByDay;
  /** Each MCP server's sampling spend as counted here (by server name): a series of its own each. */
  servers?: Record<string, CompletionSpendByDay>;
  /** This extension's other uses (commit messages, reviews, next-edit suggestions) by series name: a series of their own each. */
  own?: Record<string, CompletionSpendByDay>;
}

export function buildReport(input: ReportInput): UsageReport {
  const { rangeDays, nowMs, logs, prices } = input;
  // One extra week before the range feeds the forecast (the last 7 complete days).
  const allDays = lastDays(Math.max(rangeDays, 8), nowMs);
  const days = allDays.slice(-rangeDays);
  const today = days[days.length - 1];
  const fromBuckets = !logs.complete && input.buckets && input.buckets.buckets.length > 0;
  // Days without figures ("no data", not $0): those before one-api's 7-day dashboard when the log
  // was too long to read whole, or, with no buckets at all, those up to the oldest call read.
  const oldestRead = logs.items.at(-1);
  const knownSince =
    fromBuckets && input.buckets!.source === 'daily-7'
      ? allDays[allDays.length - 7]
      : !fromBuckets && !logs.complete && oldestRead
        ? nextDay(localDay(oldestRead.at))
        : undefined;
  const known = (day: string) => knownSince === undefined || day >= knownSince;
  const unknownDays = days.filter((d) => !known(d));
  const cells = new Map<string, { dollars: number; requests: number }>();
  const add = (day: string, model: string, dollars: number, requests: number) => {
    if (!known(day)) return;
    const id = `${day}\u0000${model}`;
    const c = cells.get(id) ?? { dollars: 0, requests: 0 };
    c.dollars += dollars;
    c.requests += requests;
    cells.set(id, c);
  };
  if (fromBuckets) {
    for (const b of input.buckets!.buckets)
      add(input.buckets!.source === 'daily-7' ? new Date(b.at * 1000).toISOString().slice(0, 10) : localDay(b.at), b.model, b.dollars, b.requests);
  } else {
    for (const l of logs.items) add(localDay(l.at), l.model, l.dollars, 1);
  }

  if (input.completions) carveSeries(cells, input.completions, COMPLETIONS_SERIES);
  for (const [server, spend] of Object.entries(input.servers ?? {})) carveSeries(cells, spend, `${MCP_SERIES_PREFIX}${server}`);
  const ownNames = new Set(Object.keys(input.own ?? {}));
  for (const [series, spend] of Object.entries(input.own ?? {})) carveSeries(cells, spend, series);

  const inRange = new Set(days);
  const perModel = new Map<string, { dollars: number; requests: number }>();
  const dailyAll = new Map<string, number>();
  for (const [id, c] of cells) {
    const [day, model] = id.split('\u0000') as [string, string];
    dailyAll.set(day, (dailyAll.get(day) ?? 0) + c.dollars);
    if (!inRange.has(day)) continue;
    const m = perModel.get(model) ?? { dollars: 0, requests: 0 };
    m.dollars += c.dollars;
    m.requests += c.requests;
    perModel.set(model, m);
  }
  const ranked = [...perModel.entries()].sort((a, b) => b[1].dollars - a[1].dollars || a[0].localeCompare(b[0]));
  // What this extension counted for a use of its own (completions, an MCP server) keeps its name however small: that is what the person looks for.
  const own = (m: string) => m === COMPLETIONS_SERIES || m.startsWith(MCP_SERIES_PREFIX) || ownNames.has(m);
  const pinned = ranked.filter(([m]) => own(m)).map(([m]) => m);
  const named =
    ranked.length > MAX_SERIES
      ? [
          ...ranked
            .filter(([m]) => !own(m))
            .slice(0, Math.max(0, MAX_SERIES - 1 - pinned.length))
            .map(([m]) => m),
          ...pinned,
        ].sort((a, b) => ranked.findIndex(([m]) => m === a) - ranked.findIndex(([m]) => m === b))
      : ranked.map(([m]) => m);
  const other = otherSeries();
  const seriesOf = (model: string) => (named.includes(model) ? model : other);
  const names = ranked.length > named.length ? [...named, other] : named;
  const series = names.map((name) => ({ name, dollars: days.map(() => 0) }));
  for (const [id, c] of cells) {
    const [day, model] = id.split('\u0000') as [string, string];
    const i = days.indexOf(day);
    if (i === -1) continue;
    series[names.indexOf(seriesOf(model))].dollars[i] += c.dollars;
  }
  const dailyTotals = days.map((_, i) => series.reduce((n, s) => n + s.dollars[i], 0));
  const rows = [...cells.entries()]
    .map(([id, c]) => {
      const [day, model] = id.split('\u0000') as [string, string];
      return { day, model, ...c };
    })
    .filter((r) => inRange.has(r.day))
    .sort((a, b) => a.day.localeCompare(b.day) || a.model.localeCompare(b.model));
  const totalDollars = dailyTotals.reduce((n, d) => n + d, 0);
  const requests = [...perModel.values()].reduce((n, m) => n + m.requests, 0);

  // Tokens, keys and top calls need single calls: from the log (all of it, or its newest part).
  const start = rangeStart(rangeDays, nowMs);
  const calls = logs.items.filter((l) => l.at >= start);
  const { tokens, keys } = callFigures(calls);

  const f =
    input.balanceDollars === undefined
      ? undefined
      : forecast(
          input.balanceDollars,
          allDays.filter(known).map((day) => ({ day, dollars: dailyAll.get(day) ?? 0 })),
          today,
        );
  return {
    mode: 'full',
    rangeDays,
    days,
    unknownDays,
    series,
    dailyTotals,
    rows,
    totalDollars,
    todayDollars: dailyTotals[dailyTotals.length - 1] ?? 0,
    requests,
    tokens,
    sampleNote: logs.complete
      ? undefined
      : logs.total
        ? l10n.t('Tokens, keys and the costliest calls are from the newest {0} calls of {1}.', formatCount(calls.length), formatCount(logs.total))
        : l10n.t('Tokens, keys and the costliest calls are from the newest {0} calls.', formatCount(calls.length)),
    perKey: [...keys.entries()].map(([name, k]) => ({ name: name || l10n.t('(unnamed key)'), ...k })).sort((a, b) => b.dollars - a.dollars),
    perModel: ranked.map(([model, m]) => ({
      model,
      ...m,
      ...(ownNames.has(model)
        ? { price: l10n.t("this editor's {0}, counted by Model Gateway at the model's price", model.toLowerCase()), priceKnown: true }
        : describePrice(prices, model)),
    })),
    topCalls: [...calls]
      .sort((a, b) => b.quota - a.quota)
      .slice(0, 10)
      .map(topCall),
    balanceDollars: input.balanceDollars,
    username: input.username,
    forecast: f,
    empty: cells.size === 0,
    source: sourceNote(input, Boolean(fromBuckets), unknownDays.length),
    generatedAt: nowMs,
  };
}

/** Tokens (with the cache's hit rate) and spend per key, from single calls. */
function callFigures(calls: ReportInput['logs']['items']): { tokens: UsageReport['tokens']; keys: Map<string, { dollars: number; requests: number }> } {
  const tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } as UsageReport['tokens'];
  const keys = new Map<string, { dollars: number; requests: number }>();
  for (const l of calls) {
    tokens.input += l.promptTokens;
    tokens.output += l.completionTokens;
    tokens.cacheRead += l.cacheRead;
    tokens.cacheWrite += l.cacheWrite;
    const k = keys.get(l.keyName) ?? { dollars: 0, requests: 0 };
    k.dollars += l.dollars;
    k.requests += 1;
    keys.set(l.keyName, k);
  }
  const cacheable = tokens.input + tokens.cacheRead + tokens.cacheWrite;
  if (tokens.cacheRead + tokens.cacheWrite > 0 && cacheable > 0) tokens.hitRate = tokens.cacheRead / cacheable;
  return { tokens, keys };
}

/** Where the figures per day come from, as the view says it. */
function sourceNote(input: ReportInput, fromBuckets: boolean, unknownDays: number): string {
  const { logs } = input;
  return fromBuckets
    ? input.buckets?.source === 'hourly'
      ? l10n.t("Spend per day from the gateway's hourly usage data (it lags by a few minutes).")
      : unknownDays
        ? l10n.t("Spend per day from the gateway's 7-day dashboard; the {0} days before it are unknown (the log is too long to read whole).", unknownDays)
        : l10n.t("Spend per day from the gateway's 7-day dashboard.")
    : logs.complete
      ? l10n.t("Spend per day from the gateway's request log.")
      : unknownDays
        ? l10n.t(
            "Spend per day from the newest {0} calls of the gateway's request log (it has no usage buckets); the {1} days before them are unknown.",
            formatCount(logs.items.length),
            unknownDays,
          )
        : l10n.t("Spend per day from the newest {0} calls of the gateway's request log (it has no usage buckets).", formatCount(logs.items.length));
}

/**
 * Moves what this extension counted for one use (inline completions, an MCP server's sampling)
 * from its model's cell of each day to a cell of its own (never more than the gateway reported
 * for that model and day: its log may lag behind).
 */
function carveSeries(cells: Map<string, { dollars: number; requests: number }>, spend: CompletionSpendByDay, series: string): void {
  for (const [day, { byModel }] of Object.entries(spend)) {
    for (const [model, counted] of Object.entries(byModel)) {
      const from = cells.get(`${day}\u0000${model}`);
      if (!from) continue;
      const requests = Math.min(from.requests, counted.requests);
      // Every call of the model that day was of this use: all its spend moves (the gateway's
      // price wins over this extension's estimate, which may differ in the last digits).
      const dollars = requests === from.requests ? from.dollars : Math.min(from.dollars, counted.dollars);
      if (dollars <= 0 && requests <= 0) continue;
      from.dollars -= dollars;
      from.requests -= requests;
      const id = `${day}\u0000${series}`;
      const to = cells.get(id) ?? { dollars: 0, requests: 0 };
      to.dollars += dollars;
      to.requests += requests;
      cells.set(id, to);
      if (from.requests <= 0) cells.delete(`${day}\u0000${model}`);
    }
  }
}

function topCall(l: UsageLogEntry): UsageReport['topCalls'][number] {
  return { at: l.at, model: l.model, keyName: l.keyName, dollars: l.dollars, promptTokens: l.promptTokens, completionTokens: l.completionTokens };
}

function describePrice(prices: PriceBook, model: string): { price: string; priceKnown: boolean } {
  if (model.startsWith(MCP_SERIES_PREFIX))
    return {
      price: l10n.t('requests of the MCP server "{0}" (sampling), counted by Model Gateway at the model\'s price', model.slice(MCP_SERIES_PREFIX.length)),
      priceKnown: true,
    };
  if (model === COMPLETIONS_SERIES) return { price: l10n.t("ghost text in this editor, counted by Model Gateway at the model's price"), priceKnown: true };
  const found = prices.price(model);
  const image = found ? undefined : imageFamilyPrice(model);
  if (image) return { price: image, priceKnown: true };
  if (!found)
    return {
      price: prices.hasGatewayPrices ? l10n.t('price unknown (not configured on the gateway)') : l10n.t('price unknown (the gateway publishes none)'),
      priceKnown: false,
    };
  const p = found.price;
  return { price: found.source === 'settings' ? l10n.t('{0} (your setting)', priceText(p)) : priceText(p), priceKnown: true };
}

/** The report for an API key alone: the key's own totals, no per-day data. */
export function keyOnlyReport(rangeDays: RangeDays, key: KeyBilling, nowMs: number): UsageReport {
  const days = lastDays(rangeDays, nowMs);
  return {
    mode: 'key-only',
    rangeDays,
    days,
    unknownDays: [],
    series: [],
    dailyTotals: days.map(() => 0),
    rows: [],
    totalDollars: key.usedDollars,
    todayDollars: 0,
    requests: 0,
    tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    perKey: [],
    perModel: [],
    topCalls: [],
    key,
    empty: true,
    source: "With only an API key the gateway reports the key's limit and its total use. Set the system access token for spend per day, model and key.",
    generatedAt: nowMs,
  };
}

/** What makes a report built from one key's log a key's report: its figures, name, newest calls and source. */
export function keyScope(key: KeyBilling & { name?: string }, logs: UsageLogs): Pick<UsageReport, 'scope' | 'key' | 'keyName' | 'recentCalls' | 'source'> {
  return {
    scope: 'key',
    key,
    keyName: key.name,
    recentCalls: logs.items
      .slice(0, RECENT_CALLS)
      .map((l) => ({ at: l.at, model: l.model, dollars: l.dollars, promptTokens: l.promptTokens, completionTokens: l.completionTokens })),
    source: logs.complete
      ? l10n.t("This API key's calls, from the gateway's log of the key (read with the key alone: the account's other keys are not in it).")
      : l10n.t(
          "This API key's newest {0} calls, from the gateway's log of the key (it keeps no more; the account's other keys are not in it).",
          formatCount(logs.items.length),
        ),
  };
}

/** Newest calls a key's report lists. */
const RECENT_CALLS = 20;

/** The chart's data as CSV: one row per day and model; the dollar column sums to the total shown. */
export function reportCsv(r: UsageReport): string {
  return toCsv(
    ['date', 'model', 'requests', 'dollars'],
    r.rows.map((row) => [row.day, row.model, row.requests, Number(row.dollars.toFixed(6))]),
  );
}
