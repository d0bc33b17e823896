/** Asks the gateway for what the Usage view shows (no `vscode` here: tests call it directly). */
import type { GatewayClient } from '../../gateway/client';
import { PriceBook } from '../../common/prices';
import { buildReport, keyOnlyReport, keyScope, rangeStart, type RangeDays, type UsageReport } from './report';
import type { CompletionSpendByDay } from '../../common/usageReport';

/** The gateway's clock may run ahead of this machine's: ask for a little past "now". */
export const CLOCK_SKEW_SECONDS = 3600;

export interface CollectOptions {
  rangeDays: RangeDays;
  /** With the system access token: the whole picture; without it, the key's billing only. */
  hasAccessToken: boolean;
  /** The caller's price book (the extension's, cached hourly); absent: the gateway's prices are read now. */
  prices?: PriceBook;
  nowMs?: number;
  /** Most log rows read (newest first); past it, spend per day comes from the usage buckets. */
  maxLogRows?: number;
  /** Inline completions' spend as this extension counted it (a series of its own in the chart). */
  completions?: CompletionSpendByDay;
  /** Each MCP server's sampling spend as this extension counted it (a series each). */
  servers?: Record<string, CompletionSpendByDay>;
  /** This extension's other uses by series name (commit messages, reviews, next edits). */
  own?: Record<string, CompletionSpendByDay>;
  signal?: AbortSignal;
}

export async function collectUsage(client: GatewayClient, o: CollectOptions): Promise<UsageReport> {
  const nowMs = o.nowMs ?? Date.now();
  if (!o.hasAccessToken) return collectKeyUsage(client, o, nowMs);
  const usage = client.account.usage;
  const me = await client.account.self({ signal: o.signal });
  // A week before the range as well: the forecast reads the last 7 complete days.
  const period = { start: rangeStart(Math.max(o.rangeDays, 8), nowMs), end: Math.floor(nowMs / 1000) + CLOCK_SKEW_SECONDS };
  const [logs, prices] = await Promise.all([
    usage.logs(period, { maxRows: o.maxLogRows, signal: o.signal }),
    o.prices ??
      usage.pricing({ group: me.group, signal: o.signal }).then(
        (p) => new PriceBook(p),
        () => new PriceBook(undefined),
      ),
  ]);
  // A gateway without buckets (or refusing them) leaves the newest part of the log: the report says so.
  const buckets = logs.complete ? undefined : await usage.buckets(period, { signal: o.signal }).catch(() => undefined);
  return buildReport({
    rangeDays: o.rangeDays,
    nowMs,
    logs,
    buckets,
    prices,
    balanceDollars: me.balanceDollars,
    username: me.username,
    completions: o.completions,
    servers: o.servers,
    own: o.own,
  });
}

/**
 * With the API key alone: the key's own figures, and, where the gateway keeps a log per key
 * (new-api `/api/log/token`), its spend per day, models, tokens and newest calls from that log.
 * Elsewhere (or when the log is refused) the key's totals only.
 */
async function collectKeyUsage(client: GatewayClient, o: CollectOptions, nowMs: number): Promise<UsageReport> {
  const key = client.account.key;
  const status = await key.status({ signal: o.signal });
  const logs = await key.logs({ signal: o.signal }).catch(() => undefined);
  if (!logs) return keyOnlyReport(o.rangeDays, status, nowMs);
  const prices =
    o.prices ??
    (await client.account.usage.pricing({ signal: o.signal }).then(
      (p) => new PriceBook(p),
      () => new PriceBook(undefined),
    ));
  const report = buildReport({
    rangeDays: o.rangeDays,
    nowMs,
    logs,
    prices,
    balanceDollars: status.unlimited ? undefined : status.remainingDollars,
    completions: o.completions,
    servers: o.servers,
    own: o.own,
  });
  return { ...report, ...keyScope(status, logs) };
}
