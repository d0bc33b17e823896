// How long the Usage view takes to read its figures from a busy account, on each server profile:
// the log is read page by page (new-api 100 a page, one-api 10), past 2,000 calls (500 on one-api)
// spend per day comes from the usage buckets instead.
import { GatewayClient } from '../src/gateway';
import { collectUsage } from '../src/usage/core/collect';
import { GatewayEmulator } from '../test/emulator/server';
import type { ServerProfile } from '../test/emulator/profiles';

export interface UsageBenchRun {
  profile: ServerProfile;
  calls: number;
  rangeDays: 7 | 30;
  ms: number;
  requests: number;
  complete: boolean;
  totalDollars: number;
  billedDollars: number;
}

/** Bills `calls` calls spread over the last 30 days to the demo user, then times the view's figures. */
export async function runUsageBench(callCounts = [300, 5000]): Promise<UsageBenchRun[]> {
  const runs: UsageBenchRun[] = [];
  for (const profile of ['new-api', 'one-api'] as const) {
    for (const calls of callCounts) {
      const emu = await GatewayEmulator.start({ profile });
      const key = emu.store.findKey(GatewayEmulator.demoKey)!;
      const now = Date.now();
      for (let i = 0; i < calls; i++) {
        const at = now - Math.floor((((i * 7919) % 1000) / 1000) * 29 * 86_400_000) - 60_000;
        emu.store.spend(key, 2000 + (i % 50) * 40, { model: ['gpt-4o-mini', 'gpt-4o', 'claude-sonnet-emu'][i % 3], prompt: 1500, completion: 300 }, at);
      }
      const client = new GatewayClient({
        baseUrl: emu.url,
        apiKey: GatewayEmulator.demoKey,
        systemAccessToken: GatewayEmulator.demoAccessToken,
        userId: String(GatewayEmulator.demoUserId),
        maxRetries: 0,
      });
      try {
        for (const rangeDays of [7, 30] as const) {
          const before = emu.requests.length;
          const t = performance.now();
          const r = await collectUsage(client, { rangeDays, hasAccessToken: true });
          const ms = performance.now() - t;
          const start = Math.floor(new Date(new Date().setHours(0, 0, 0, 0) - (rangeDays - 1) * 86_400_000).getTime() / 1000);
          const billed =
            emu.store.logs
              .filter((l) => l.createdAt >= start && !r.unknownDays.includes(new Date(l.createdAt * 1000).toISOString().slice(0, 10)))
              .reduce((n, l) => n + l.quota, 0) / 500_000;
          runs.push({
            profile,
            calls,
            rangeDays,
            ms,
            requests: emu.requests.length - before,
            complete: !r.sampleNote,
            totalDollars: r.totalDollars,
            billedDollars: billed,
          });
        }
      } finally {
        await client.close();
        await emu.close();
      }
    }
  }
  return runs;
}
