import { strict as assert } from 'node:assert';
import { expiry, jobsFor, keyDescription, keyTooltip } from '../../src/account/core/format';
import type { ApiKeyRecord } from '../../src/gateway';
import { redact, registerSecret } from '../../src/shell/redact';
import { isSameKey } from '../../src/common/money';

const record = (over: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id: 3,
  name: 'ci',
  key: 'sk-abcdefghijklmnopqrstuvwxyz0123',
  keyIsFull: true,
  status: 1,
  state: 'enabled',
  enabled: true,
  expiredTime: -1,
  remainQuota: 1_250_000,
  unlimitedQuota: false,
  subnet: '',
  raw: {},
  ...over,
});

describe('UI helpers', () => {
  it('redacts the secrets in use, anything shaped like a key, and bearer credentials', () => {
    const token = 'a1b2c3d4e5f6-access-token';
    const line = `calling with sk-live1234567890abc and Bearer ${token}; token=${token}; x-api-key: sk-other999999`;
    registerSecret(token);
    const out = redact(line);
    assert.ok(!out.includes(token));
    assert.ok(!out.includes('sk-live1234567890abc'));
    assert.ok(!out.includes('sk-other999999'));
    assert.match(out, /Bearer «redacted»/);
    assert.equal(redact('nothing secret here'), 'nothing secret here');
  });

  it('offers a model only for the jobs it can do', () => {
    assert.deepEqual(jobsFor('gpt-4o'), ['chat', 'completion']);
    assert.deepEqual(jobsFor('text-embedding-3-small'), ['embeddings']);
    assert.deepEqual(jobsFor('rerank-emu'), ['rerank']);
    assert.deepEqual(jobsFor('gpt-4o-mini-tts'), ['speech']);
    assert.deepEqual(jobsFor('whisper-1'), ['transcription']);
    assert.deepEqual(jobsFor('V_3'), ['image']);
    assert.deepEqual(jobsFor('sora-2'), ['video']);
    assert.deepEqual(jobsFor('omni-moderation-latest'), []);
  });

  it('recognises the key in use from a whole or a masked listing', () => {
    const inUse = 'sk-abcd0123456789xyzw';
    assert.equal(isSameKey('abcd0123456789xyzw', inUse), true);
    assert.equal(isSameKey('abcd**********xyzw', inUse), true);
    assert.equal(isSameKey('abcd**********0000', inUse), false);
    assert.equal(isSameKey('abcd**********xyzw', undefined), false);
    assert.equal(isSameKey('sk-other0123456789', inUse), false);
  });

  it('describes a key: masked, quota in dollars, expiry ("never" for -1), state first when off', () => {
    const now = Date.parse('2026-11-21T00:00:00Z');
    assert.equal(keyDescription(record(), now), 'sk-abcd…0123 · $2.50 left · expires never');
    assert.equal(keyDescription(record({ unlimitedQuota: true }), now), 'sk-abcd…0123 · unlimited · expires never');
    const later = Math.floor(Date.parse('2027-01-31T00:00:00Z') / 1000);
    assert.equal(
      keyDescription(record({ state: 'disabled', enabled: false, expiredTime: later }), now),
      'disabled · sk-abcd…0123 · $2.50 left · expires 2027-01-31',
    );
    assert.equal(expiry(Math.floor(Date.parse('2026-01-01T00:00:00Z') / 1000), now), 'expired 2026-01-01');
    const tip = keyTooltip(record({ subnet: '10.0.0.0/8' }), now);
    assert.match(tip, /Subnet: 10\.0\.0\.0\/8/);
    assert.ok(!tip.includes('abcdefghijklmnop'), 'the tooltip never shows the whole key');
  });
});
