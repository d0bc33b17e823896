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

export const DEMO_KEY = 'sk-emulator-demo-key-0000000000000000';
export const DEMO_ACCESS_TOKEN = 'emulator-demo-access-token';

/** Users and API keys, with the spec's limits: expiry, quota, subnet, enabled state, models. */
export class Store {
  readonly users = new Map<number, EmuUser>();
  readonly keys = new Map<number, EmuKey>();
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

  /** Charges quota to a key and its user. */
  spend(key: EmuKey, quota: number): void {
    const q = Math.max(0, Math.ceil(quota));
    const user = this.users.get(key.userId);
    if (user) {
      user.quota -= q;
      user.usedQuota += q;
    }
    if (!key.unlimitedQuota) key.remainQuota -= q;
    key.usedQuota += q;
  }
}
