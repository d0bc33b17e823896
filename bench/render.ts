/**
 * Streaming a 4,000-token answer into the chat panel, in headless Chromium: the real webview
 * bundle (dist/webview.js) and stylesheet, fed `text` messages as the host sends them, 8 tokens
 * every 16 ms. The messages are posted on the page's own thread, as VS Code's webview frame
 * relays each host message to the view's document on the same thread
 * (`webview/browser/pre/index.html`), and paced by a timer: an animation frame per step (as this
 * bench did before) made the page draw frames the view never asked for (on an empty page the
 * loop cost 116–154 ms per 4,000 tokens paced by frames, 59–87 ms by a timer). Main-thread time comes from Chromium's own accounting (CDP
 * Performance.getMetrics TaskDuration). The naive alternative renders the whole answer again on
 * every chunk; both run on the same page setup.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { launchBrowser, ROOT } from '../test/vscode/harness';

export interface RenderBenchResult {
  tokens: number;
  runs: { name: string; mainThreadMs: number; msPer1000Tokens: number; wallMs: number }[];
}

const TOKENS = 4000;
const PER_FRAME = 8;

/** A long, realistic answer split into ~4-character tokens. */
function answerTokens(): string[] {
  const para = 'The gateway streams each answer as small chunks, and the panel renders them as they arrive without blocking the editor. ';
  const code = '```ts\nexport function add(a: number, b: number): number {\n  return a + b; // keep it simple\n}\n```\n\n';
  const list = '- first point about caching\n- second point about **streams**\n- third point with `inline code`\n\n';
  let text = '';
  while (text.length < TOKENS * 4) text += `${para}${para}\n\n${list}${code}`;
  const tokens: string[] = [];
  for (let i = 0; i < TOKENS; i++) tokens.push(text.slice(i * 4, i * 4 + 4));
  return tokens;
}

const PAGE = (css: string) => `<!DOCTYPE html><html><head><style>${css}</style></head><body><div id="app"></div></body></html>`;

export async function runRenderBench(): Promise<RenderBenchResult> {
  const webview = readFileSync(join(ROOT, 'dist', 'webview.js'), 'utf8');
  const css = readFileSync(join(ROOT, 'media', 'chat.css'), 'utf8');
  const markdown = (
    await esbuild.build({
      entryPoints: [join(ROOT, 'test', 'e2e', 'fixtures', 'markdown-entry.ts')],
      bundle: true,
      platform: 'browser',
      format: 'iife',
      write: false,
      minify: true,
    })
  ).outputFiles[0].text;
  const tokens = answerTokens();
  const browser = await launchBrowser();
  const runs: RenderBenchResult['runs'] = [];
  try {
    for (const name of ['panel (incremental render)', 'panel, after 300 earlier turns', 'naive (full re-render per chunk)'] as const) {
      const earlier = name.includes('300 earlier') ? 300 : 0;
      const page = await browser.newPage({ viewport: { width: 420, height: 900 } });
      await page.setContent(PAGE(css));
      if (name.startsWith('panel')) {
        await page.addScriptTag({ content: 'window.acquireVsCodeApi = () => ({ postMessage() {}, getState() { return {}; }, setState() {} });' });
        await page.addScriptTag({ content: webview });
        await page.evaluate((n) => {
          const usage = { input: 10, output: 10, cacheRead: 0, cacheWrite: 0 };
          const answer =
            '## Earlier answer\n\nSome **markdown** with `code`, a list:\n\n- one\n- two\n\n```ts\nconst x = 1;\n```\n\nAnd a closing paragraph of ordinary prose for the reader.';
          const history = Array.from({ length: n }, (_, i) => [
            { id: `u${i}`, role: 'user', text: `question ${i}`, images: [], context: [], at: 0 },
            { id: `a${i}`, role: 'assistant', model: 'bench', format: 'chat', steps: [{ text: answer, toolCalls: [] }], status: 'done', usage, at: 0 },
          ]).flat();
          const turn = {
            id: 't1',
            role: 'assistant',
            model: 'bench',
            format: 'chat',
            steps: [{ text: '', toolCalls: [] }],
            status: 'streaming',
            usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
            at: 0,
          };
          const state = {
            models: ['bench'],
            model: 'bench',
            formatChoice: 'auto',
            format: 'chat',
            toolsEnabled: true,
            configured: true,
            busy: true,
            conversations: [],
            conversation: { id: 'c', title: 'bench', turns: [...history, { id: 'u', role: 'user', text: 'go', images: [], context: [], at: 0 }, turn] },
            fixes: {},
            pendingApprovals: [],
          };
          const g = globalThis as unknown as { postMessage(m: unknown, o: string): void; __state: unknown };
          g.__state = state;
          g.postMessage({ type: 'state', state }, '*');
        }, earlier);
      } else {
        await page.addScriptTag({ content: markdown });
        await page.evaluate(() => {
          const g = globalThis as unknown as {
            document: { getElementById(id: string): { innerHTML: string } };
            renderMarkdown(s: string): string;
            __text: string;
            addEventListener(t: string, f: (e: { data: { delta: string } }) => void): void;
          };
          const el = g.document.getElementById('app');
          g.__text = '';
          g.addEventListener('message', (e) => {
            g.__text += e.data.delta;
            el.innerHTML = g.renderMarkdown(g.__text);
          });
        });
      }
      await page.waitForTimeout(200);
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Performance.enable');
      const taskSeconds = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0;
      const before = await taskSeconds();
      const t0 = Date.now();
      await page.evaluate(
        async ([toks, perFrame]) => {
          const g = globalThis as unknown as {
            postMessage(m: unknown, o: string): void;
            requestAnimationFrame(f: () => void): void;
            setTimeout(f: () => void, ms: number): void;
          };
          // Paced by a timer, as messages arrive in VS Code (its webview frame relays each to the
          // view's document on the same thread, as this loop posts them): no animation frame is
          // asked for that the view does not ask for itself.
          for (let i = 0; i < toks.length; i += perFrame) {
            for (const delta of toks.slice(i, i + perFrame)) g.postMessage({ type: 'text', turnId: 't1', step: 0, delta }, '*');
            await new Promise<void>((r) => g.setTimeout(r, 16));
          }
          const done = {
            id: 't1',
            role: 'assistant',
            model: 'bench',
            format: 'chat',
            steps: [{ text: toks.join(''), toolCalls: [] }],
            status: 'done',
            usage: { input: 1, output: toks.length, cacheRead: 0, cacheWrite: 0 },
            at: 0,
          };
          g.postMessage({ type: 'turn', turn: done }, '*');
          // The host then pushes the whole state, as it does after every turn.
          const st = (g as unknown as { __state?: { conversation: { turns: unknown[] }; busy: boolean } }).__state;
          if (st)
            g.postMessage(
              { type: 'state', state: { ...st, busy: false, conversation: { ...st.conversation, turns: [...st.conversation.turns.slice(0, -1), done] } } },
              '*',
            );
          await new Promise<void>((r) => g.requestAnimationFrame(() => r()));
        },
        [tokens, PER_FRAME] as const,
      );
      const wallMs = Date.now() - t0;
      const mainThreadMs = ((await taskSeconds()) - before) * 1000;
      const rendered = await page.evaluate(() => (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText.length);
      if (rendered < TOKENS) {
        const dbg = await page.evaluate(() => {
          const m = (
            globalThis as unknown as {
              document: {
                getElementById(id: string): { scrollTop: number; scrollHeight: number; clientHeight: number; querySelectorAll(s: string): { length: number } };
              };
            }
          ).document.getElementById('messages');
          return [m.scrollTop, m.scrollHeight, m.clientHeight, m.querySelectorAll('.turn').length];
        });
        throw new Error(`${name}: only ${rendered} characters rendered ${JSON.stringify(dbg)}`);
      }
      runs.push({ name, mainThreadMs, msPer1000Tokens: (mainThreadMs / TOKENS) * 1000, wallMs });
      await page.close();
    }
  } finally {
    await browser.close();
  }
  return { tokens: TOKENS, runs };
}
