import { strict as assert } from 'node:assert';
import { addSpend, classifyInitiator, localDay, RateLimit, speechCostDollars, spentOn, transcriptionCostDollars } from '../../src/runtime/core/limits';

describe('limits for callers outside our own chat', () => {
  it('the cap counts one local day, and starts again the next', () => {
    const morning = new Date(2026, 10, 23, 9, 0).getTime();
    const night = new Date(2026, 10, 23, 23, 59).getTime();
    const tomorrow = new Date(2026, 10, 24, 0, 1).getTime();
    let r = addSpend(undefined, 1.25, morning);
    r = addSpend(r, 0.5, night);
    assert.deepEqual(r, { day: '2026-11-23', dollars: 1.75 });
    assert.equal(spentOn(r, localDay(tomorrow)), 0);
    assert.deepEqual(addSpend(r, 0.1, tomorrow), { day: '2026-11-24', dollars: 0.1 });
    assert.equal(addSpend(r, -5, night).dollars, 1.75, 'a negative cost never lowers the count');
    assert.equal(spentOn({ day: '2026-11-23', dollars: Number.NaN }, '2026-11-23'), 0);
  });

  it("names who asks: VS Code's chat, this extension, another extension, or unknown", () => {
    assert.deepEqual(classifyInitiator('core', 'model-gateway.model-gateway'), { kind: 'vscode' });
    assert.deepEqual(classifyInitiator('GitHub.copilot-chat', 'model-gateway.model-gateway'), { kind: 'vscode' });
    assert.deepEqual(classifyInitiator('model-gateway.model-gateway', 'model-gateway.model-gateway'), { kind: 'self' });
    assert.deepEqual(classifyInitiator('Evil.Miner', 'model-gateway.model-gateway'), { kind: 'extension', id: 'evil.miner' });
    assert.deepEqual(classifyInitiator(undefined, 'x.y'), { kind: 'unknown' });
    assert.deepEqual(classifyInitiator('', 'x.y'), { kind: 'unknown' });
  });

  it('a sliding window: max calls a window, then the wait until the oldest leaves it', () => {
    const limit = new RateLimit(3, 60_000);
    assert.ok(limit.take(0).ok && limit.take(10).ok && limit.take(20).ok);
    const refused = limit.take(30);
    assert.deepEqual(refused, { ok: false, retryInMs: 59_970 });
    assert.ok(limit.take(60_000).ok, 'the first call has left the window');
    assert.equal(limit.take(60_001).ok, false);
  });

  it('media tools count high where the bill depends on what we do not see', () => {
    assert.equal(speechCostDollars(4096), 0.12288);
    assert.equal(transcriptionCostDollars(100), 0.006, 'a short file is a minute');
    assert.equal(transcriptionCostDollars(25 * 1024 * 1024), 0.15);
  });
});
