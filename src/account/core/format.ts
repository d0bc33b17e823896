import * as l10n from '@vscode/l10n';
import type { Job } from '../../common/jobs';
import type { ApiKeyRecord } from '../../gateway';
import { formatDollars, maskKey, quotaToDollars } from '../../common/money';

/** Pure formatting for the account tree (tested in Node). */

export function dollars(quota: number): string {
  return formatDollars(quotaToDollars(quota));
}

export function expiry(expiredTime: number, nowMs = Date.now()): string {
  if (expiredTime === -1) return l10n.t('never');
  const date = new Date(expiredTime * 1000);
  const iso = date.toISOString().slice(0, 10);
  return expiredTime * 1000 <= nowMs ? l10n.t('expired {0}', iso) : iso;
}

/** A key's state in words (the gateway's states: enabled, disabled, expired, exhausted). */
export function keyState(state: ApiKeyRecord['state']): string {
  switch (state) {
    case 'enabled':
      return l10n.t('enabled');
    case 'disabled':
      return l10n.t('disabled');
    case 'expired':
      return l10n.t('expired');
    case 'exhausted':
      return l10n.t('exhausted');
    default:
      return String(state);
  }
}

export function keyDescription(k: ApiKeyRecord, nowMs = Date.now()): string {
  const quota = k.unlimitedQuota ? l10n.t('unlimited') : l10n.t('{0} left', dollars(k.remainQuota));
  const expires = l10n.t('expires {0}', expiry(k.expiredTime, nowMs));
  // A key that does not work says so first: the sidebar cuts long descriptions at the end.
  return k.state === 'enabled' ? `${maskKey(k.key)} · ${quota} · ${expires}` : `${keyState(k.state)} · ${maskKey(k.key)} · ${quota} · ${expires}`;
}

/** What makes a key that the gateway marked expired (3) or exhausted (4) work again. */
export function keyFix(k: ApiKeyRecord): string | undefined {
  if (k.state === 'expired') return l10n.t('Expired: extend its expiry (Edit › Expiry) or set it to never expire, then enable it.');
  if (k.state === 'exhausted') return l10n.t('Its quota is used up: raise the quota (Edit › Quota) or make it unlimited, then enable it.');
  return undefined;
}

export function keyTooltip(k: ApiKeyRecord, nowMs = Date.now()): string {
  const fix = keyFix(k);
  return [
    `**${k.name || l10n.t('(unnamed)')}** — ${keyState(k.state)}`,
    ...(fix ? ['', fix] : []),
    '',
    `- ${l10n.t('Key: {0}', `\`${maskKey(k.key)}\``)}`,
    `- ${l10n.t('Remaining quota: {0}', k.unlimitedQuota ? l10n.t('unlimited') : dollars(k.remainQuota))}`,
    `- ${l10n.t('Expires: {0}', expiry(k.expiredTime, nowMs))}`,
    `- ${l10n.t('Subnet: {0}', k.subnet || l10n.t('any address'))}`,
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
