import { randomBytes } from 'node:crypto';
import type { Clock } from './clock';

export interface EmuUser {
  id: number;
  username: string;
  /** Balance in quota units (500,000 = $1). */
  quota: number;
  usedQuota: number;
  role: number;
  status: 1 | 2;
  /** The system access token for the account API. */
  accessToken: string;
}

export interface EmuKey {
  id: number;
  userId: number;
  name: string;
  /** Stored without the `sk-` prefix, as new-api does. */
  key: string;
  /** 1 enabled, 2 disabled, 3 expired, 4 exhausted (the relay sets 3 and 4 on use); 0 is stored as sent. */
  status: number;
  /** Unix seconds, or -1 for never. */
  expiredTime: number;
  remainQuota: number;
  unlimitedQuota: boolean;
  usedQuota: number;
  /** Comma- or newline-separated IPv4 CIDRs or addresses; empty means no restriction. */
  subnet: string;
  /** Allowed model ids; null means all. */
  models: string[] | null;
  createdTime: number;
}

/** One billed call, as both servers' consume log (type 2) records it. */
export interface EmuLog {
  id: number;
  userId: number;
  /** The key that made the call (new-api's `token_id`: `/api/log/token` reads by it). */
  tokenId: number;
  /** Unix seconds. */
  createdAt: number;
  tokenName: string;
  modelName: string;
  quota: number;
  promptTokens: number;
  completionTokens: number;
  cacheRead: number;
  cacheWrite: number;
  isStream: boolean;
}

/** What a relay handler knows about the call it bills. */
export interface SpendDetail {
  model: string;
  prompt?: number;
  completion?: number;
  cacheRead?: number;
  cacheWrite?: number;
  stream?: boolean;
}

export const DEMO_KEY = 'sk-emulator-demo-key-0000000000000000';
export const DEMO_ACCESS_TOKEN = 'emulator-demo-access-token';

/** Users and API keys, with the spec's limits: expiry, quota, subnet, enabled state, models. */
export class Store {
  readonly users = new Map<number, EmuUser>();
  readonly keys = new Map<number, EmuKey>();
  /** The consume log, oldest first: every billed call, so usage figures add up to the balance. */
  readonly logs: EmuLog[] = [];
  /** Redemption codes (one-api and new-api `redemptions`): 1 unused, 3 used. */
  readonly redemptions = new Map<string, { quota: number; status: 1 | 3; usedBy?: number }>();
  /** Check-ins by user: the local days checked in (new-api `checkins`). */
  readonly checkins = new Map<number, { day: string; quota: number }[]>();
  private nextLogId = 1;
  private nextKeyId = 1;
  private nextUserId = 1;

  constructor(private readonly clock: Clock) {
    const demo = this.addUser({ username: 'demo', quota: 50_000_000, accessToken: DEMO_ACCESS_TOKEN });
    this.addKey({ userId: demo.id, name: 'demo', key: DEMO_KEY, unlimitedQuota: true });
  }

  addUser(init: Partial<EmuUser> & { username: string }): EmuUser {
    const user: EmuUser = {
      id: this.nextUserId++,
      quota: 5_000_000,
      usedQuota: 0,
      role: 1,
      status: 1,
      accessToken: randomBytes(16).toString('hex'),
      ...init,
    };
    this.users.set(user.id, user);
    return user;
  }

  /** Adds a key; returns it with the full secret (`sk-` form) in `secret`. */
  addKey(init: Partial<EmuKey> & { userId: number; name: string; key?: string }): EmuKey & { secret: string } {
    const raw = (init.key ?? `sk-${randomBytes(24).toString('hex')}`).replace(/^sk-/, '');
    const key: EmuKey = {
      id: this.nextKeyId++,
      status: 1,
      expiredTime: -1,
      remainQuota: 500_000,
      unlimitedQuota: false,
      usedQuota: 0,
      subnet: '',
      models: null,
      createdTime: Math.floor(this.clock.now() / 1000),
      ...init,
      key: raw,
    };
    this.keys.set(key.id, key);
    return { ...key, secret: `sk-${raw}` };
  }

  findKey(secret: string): EmuKey | undefined {
    const raw = secret.replace(/^sk-/, '');
    for (const k of this.keys.values()) if (k.key === raw) return k;
    return undefined;
  }

  /** Charges quota to a key and its user, and logs the call. */
  spend(key: EmuKey, quota: number, detail: SpendDetail, at = this.clock.now()): void {
    const q = Math.max(0, Math.ceil(quota));
    const user = this.users.get(key.userId);
    if (user) {
      user.quota -= q;
      user.usedQuota += q;
    }
    if (!key.unlimitedQuota) key.remainQuota -= q;
    key.usedQuota += q;
    this.logs.push({
      id: this.nextLogId++,
      userId: key.userId,
      tokenId: key.id,
      createdAt: Math.floor(at / 1000),
      tokenName: key.name,
      modelName: detail.model,
      quota: q,
      promptTokens: detail.prompt ?? 0,
      completionTokens: detail.completion ?? 0,
      cacheRead: detail.cacheRead ?? 0,
      cacheWrite: detail.cacheWrite ?? 0,
      isStream: detail.stream ?? false,
    });
  }

  /** Gives quota back to a key and its user (new-api's refund of a failed task: no consumption log). */
  refund(key: EmuKey, quota: number): void {
    const q = Math.max(0, Math.ceil(quota));
    const user = this.users.get(key.userId);
    if (user) {
      user.quota += q;
      user.usedQuota -= q;
    }
    if (!key.unlimitedQuota) key.remainQuota += q;
    key.usedQuota -= q;
  }

  /**
   * Past usage for a user's keys over the `days` before today, billed as the relay would (so the
   * balance goes down by the same amount): a few chat, embedding and image calls a day, varying by
   * day, from a fixed seed so every run shows the same history.
   */
  seedHistory(userId: number, days: number): number {
    const keys = [...this.keys.values()].filter((k) => k.userId === userId);
    if (keys.length === 0) return 0;
    let seed = 7;
    const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const dayMs = 86_400_000;
    const startOfToday = Math.floor(this.clock.now() / dayMs) * dayMs;
    const plan: { model: string; ratio: number; prompt: number; completion: number; cacheRead?: number }[] = [
      { model: 'gpt-4o-mini', ratio: 0.15, prompt: 3000, completion: 700 },
      { model: 'claude-sonnet-emu', ratio: 3, prompt: 2500, completion: 600, cacheRead: 9000 },
      { model: 'text-embedding-3-small', ratio: 0.02, prompt: 40_000, completion: 0 },
    ];
    let calls = 0;
    for (let d = days; d >= 1; d--) {
      const base = startOfToday - d * dayMs;
      const busy = 0.4 + rand() * 1.2;
      for (const p of plan) {
        const n = Math.round((2 + rand() * 6) * busy);
        for (let i = 0; i < n; i++) {
          const prompt = Math.round(p.prompt * (0.5 + rand()));
          const completion = Math.round(p.completion * (0.5 + rand()));
          const cacheRead = p.cacheRead ? Math.round(p.cacheRead * rand()) : 0;
          const key = keys[(i + d) % keys.length];
          const at = base + Math.floor((9 + rand() * 9) * 3_600_000);
          this.spend(
            key,
            (prompt + cacheRead * 0.1 + completion * 4) * p.ratio,
            { model: p.model, prompt, completion, cacheRead, stream: p.completion > 0 },
            at,
          );
          calls++;
        }
      }
    }
    return calls;
  }
}
