import { strict as assert } from 'node:assert';
import type { Browser, Page } from 'playwright-core';
import { GatewayClient, type SpeechFormat } from '../../src/gateway';
import { GatewayEmulator } from '../emulator/server';
import { launchBrowser } from '../vscode/harness';

interface PageMedia {
  muted: boolean;
  src: string;
  duration: number;
  videoWidth?: number;
  error: { code: number; message: string } | null;
  onloadeddata: (() => void) | null;
  onerror: (() => void) | null;
}
interface PageDocument {
  createElement(tag: string): PageMedia;
  body: { appendChild(el: PageMedia): void };
}

/**
 * What the emulator answers must play in a real player: speech in every format and the video
 * download are decoded by headless Chromium's media stack (loadeddata: the first frame or
 * samples decoded), with the durations they claim.
 */
describe('emulator media decodes in a real browser (headless Chromium)', function () {
  this.timeout(60_000);
  let emu: GatewayEmulator;
  let browser: Browser;
  let page: Page;
  let client: GatewayClient;

  before(async () => {
    emu = await GatewayEmulator.start();
    client = new GatewayClient({ baseUrl: emu.url, apiKey: GatewayEmulator.demoKey, sleep: (ms) => (emu.clock.advance(ms), Promise.resolve()) });
    browser = await launchBrowser();
    page = await browser.newPage();
    await page.setContent('<html><body></body></html>');
  });
  after(async () => {
    await browser?.close();
    await client?.close();
    await emu?.close();
  });

  /** Plays bytes in an <audio> or <video> element; resolves with what the browser decoded. */
  async function play(bytes: Buffer, type: string, tag: 'audio' | 'video'): Promise<{ ok: boolean; duration: number; width: number; error?: string }> {
    return page.evaluate(
      async ([b64, mime, kind]) => {
        // In the page: the media element's few members, typed here (no DOM typings in Node).
        const doc = (globalThis as unknown as { document: PageDocument }).document;
        const el = doc.createElement(kind);
        el.muted = true;
        el.src = `data:${mime};base64,${b64}`;
        doc.body.appendChild(el);
        return await new Promise<{ ok: boolean; duration: number; width: number; error?: string }>((resolve) => {
          el.onloadeddata = () => resolve({ ok: true, duration: el.duration, width: el.videoWidth || 0 });
          el.onerror = () => resolve({ ok: false, duration: 0, width: 0, error: `${el.error?.code}: ${el.error?.message}` });
          setTimeout(() => resolve({ ok: false, duration: 0, width: 0, error: 'no loadeddata within 10 s' }), 10_000);
        });
      },
      [bytes.toString('base64'), type, tag] as const,
    );
  }

  const text = 'The gateway emulator speaks in every format. Each one must play.';
  const formats: [SpeechFormat, string][] = [
    ['mp3', 'audio/mpeg'],
    ['wav', 'audio/wav'],
    ['flac', 'audio/flac'],
    ['opus', 'audio/ogg'],
    ['aac', 'audio/aac'],
  ];
  for (const [format, mime] of formats) {
    it(`speech as ${format} decodes, about as long as the text takes to say`, async () => {
      const audio = await (await client.audio.speech.create({ model: 'tts-1', input: text, voice: 'alloy', response_format: format })).buffer();
      const r = await play(audio, mime, 'audio');
      assert.ok(r.ok, `${format}: ${r.error}`);
      const expected = text.length / 15;
      assert.ok(Math.abs(r.duration - expected) < 0.6, `${format}: ${r.duration.toFixed(2)} s, expected about ${expected.toFixed(2)} s`);
    });
  }

  it('a video download is an MP4 with a real H.264 track of the requested length', async () => {
    const task = await client.videos.create({ model: 'sora-2', prompt: 'a playable clip', seconds: '8', size: '1280x720' });
    await client.videos.waitFor(task.id);
    const mp4 = await (await client.videos.content(task.id)).buffer();
    const r = await play(mp4, 'video/mp4', 'video');
    assert.ok(r.ok, r.error);
    assert.equal(Math.round(r.duration), 8);
    assert.ok(r.width > 0, 'a video track with frames');
  });
});
