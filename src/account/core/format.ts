import type { Job } from '../../common/jobs';
import type { ApiKeyRecord } from '../../gateway';
import { formatDollars, maskKey, quotaToDollars } from '../../common/money';

/** Pure formatting for the account tree (tested in Node). */

export function dollars(quota: number): string {
  return formatDollars(quotaToDollars(quota));
}

export function expiry(expiredTime: number, nowMs = Date.now()): string {
  if (expiredTime === -1) return 'never';
  const date = new Date(expiredTime * 1000);
  const iso = date.toISOString().slice(0, 10);
  return expiredTime * 1000 <= nowMs ? `expired ${iso}` : iso;
}


export function keyDescription(k: ApiKeyRecord, nowMs = Date.now()): string {
  const quota = k.unlimitedQuota ? 'unlimited' : `${dollars(k.remainQuota)} left`;
  // A key that does not work says so first: the sidebar cuts long descriptions at the end.
  const state = k.state === 'enabled' ? '' : `${k.state} · `;
  return `${state}${maskKey(k.key)} · ${quota} · expires ${expiry(k.expiredTime, nowMs)}`;
}

/** What makes a key that the gateway marked expired (3) or exhausted (4) work again. */
export function keyFix(k: ApiKeyRecord): string | undefined {
  if (k.state === 'expired') return 'Expired: extend its expiry (Edit › Expiry) or set it to never expire, then enable it.';
  if (k.state === 'exhausted') return 'Its quota is used up: raise the quota (Edit › Quota) or make it unlimited, then enable it.';
  return undefined;
}

export function keyTooltip(k: ApiKeyRecord, nowMs = Date.now()): string {
  const fix = keyFix(k);
  return [
    `**${k.name || '(unnamed)'}** — ${k.state}`,
    ...(fix ? ['', fix] : []),
    '',
    `- Key: \`${maskKey(k.key)}\``,
    `- Remaining quota: ${k.unlimitedQuota ? 'unlimited' : dollars(k.remainQuota)}`,
    `- Expires: ${expiry(k.expiredTime, nowMs)}`,
    `- Subnet: ${k.subnet || 'any address'}`,
  ].join('\n');
}

/** The jobs a model can serve, from its id (moderation models serve none of them). */
export function jobsFor(model: string): Job[] {
  if (/moderation/i.test(model)) return [];
  if (/embed/i.test(model)) return ['embeddings'];
  if (/rerank/i.test(model)) return ['rerank'];
  if (/tts|speech/i.test(model)) return ['speech'];
  if (/whisper|transcribe/i.test(model)) return ['transcription'];
  if (/^V_\d/.test(model)) return ['image'];
  if (/sora|veo|video/i.test(model)) return ['video'];
  // Any chat model can fill a hole (by a chat prompt when it has no fill-in-the-middle).
  return ['chat', 'completion'];
}
