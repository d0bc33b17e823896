import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, ROOT } from '../vscode/harness';

interface PageElement {
  innerHTML: string;
  querySelectorAll(selector: string): ArrayLike<{ dispatchEvent(e: unknown): void }>;
}
interface PageGlobals {
  __xss?: unknown;
  document: { getElementById(id: string): PageElement };
  renderMarkdown(text: string): string;
  StreamingMarkdown: new (el: PageElement) => { append(text: string): void; finish(): void };
  requestAnimationFrame(cb: (time: number) => void): void;
  MouseEvent: new (type: string, init: object) => unknown;
}

/** Answers a model could give to run script in the chat view. Each must render inert. */
const CORPUS = [
  '<script>window.__xss=1</script>',
  '<img src=x onerror="window.__xss=1">',
  '<svg onload="window.__xss=1"></svg>',
  '<iframe src="javascript:window.__xss=1"></iframe>',
  '<a href="javascript:window.__xss=1">x</a>',
  '[click](javascript:window.__xss=1)',
  '[click](JAVASCRIPT:window.__xss=1)',
  '[click](  javascript:window.__xss=1)',
  '[x](&#106;avascript:window.__xss=1)',
  '<a href="&#106;avascript:window.__xss=1">x</a>',
  '[x](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX194c3M9MTwvc2NyaXB0Pg==)',
  '![x](javascript:window.__xss=1)',
  '![x](x" onerror="window.__xss=1)',
  '[link](vbscript:msgbox(1))',
  '<details open ontoggle="window.__xss=1">x</details>',
  '<style>*{background:url(javascript:window.__xss=1)}</style>',
  '<div style="background:url(javascript:window.__xss=1)">x</div>',
  '<math><mtext><table><mglyph><style><img src=x onerror=window.__xss=1>',
  '<<script>script>window.__xss=1<</script>/script>',
  '<body onload=window.__xss=1>',
  '<object data="javascript:window.__xss=1"></object>',
  '<embed src="javascript:window.__xss=1">',
  '<form action="javascript:window.__xss=1"><button>x</button></form>',
  '<input autofocus onfocus=window.__xss=1>',
  '<meta http-equiv="refresh" content="0;url=javascript:window.__xss=1">',
  '<base href="javascript:window.__xss=1//">',
  '- item <img src=x onerror=window.__xss=1>\n- [a](javascript:window.__xss=1)',
  '```"><img src=x onerror=window.__xss=1>\ncode\n```',
  '```js" onmouseover="window.__xss=1\nx\n```',
  '```html\n<script>window.__xss=1</script>\n```',
  '| a | b |\n|---|---|\n| <img src=x onerror=window.__xss=1> | [x](javascript:window.__xss=1) |',
  '<a href="https://example.com" onclick="window.__xss=1">ok</a>',
  '<noscript><p title="</noscript><img src=x onerror=window.__xss=1>">',
  '<template><script>window.__xss=1</script></template>',
  '<svg><a xlink:href="javascript:window.__xss=1"><text>x</text></a></svg>',
];

const CHECK = `(() => {
  const bad = [];
  for (const el of document.querySelectorAll('#out *')) {
    const tag = el.tagName.toLowerCase();
    if (['script','iframe','object','embed','style','form','input','button','meta','base','svg','math','template','noscript','body'].includes(tag)) bad.push('<' + tag + '>');
    for (const a of el.attributes) {
      const v = a.value.trim().toLowerCase();
      if (a.name.startsWith('on')) bad.push(tag + '[' + a.name + ']');
      if (a.name === 'style') bad.push(tag + '[style]');
      if ((a.name === 'href' || a.name === 'src' || a.name.endsWith(':href')) && !/^(https?:|mailto:|#|x$)/.test(v)) bad.push(tag + '[' + a.name + '=' + v.slice(0, 30) + ']');
    }
  }
  return bad;
})()`;

describe("a model's answer can never run script in the chat view (headless Chromium)", function () {
  this.timeout(60_000);
  let browser: Browser;
  let page: Page;

  before(async () => {
    const built = await esbuild.build({
      entryPoints: [join(ROOT, 'test', 'e2e', 'fixtures', 'markdown-entry.ts')],
      bundle: true,
      platform: 'browser',
      format: 'iife',
      write: false,
    });
    browser = await launchBrowser();
    page = await browser.newPage();
    // No Content Security Policy here: the renderer alone must make every payload inert.
    await page.setContent('<!DOCTYPE html><html><body><div id="out"></div></body></html>');
    await page.addScriptTag({ content: built.outputFiles[0].text });
  });

  after(async () => {
    await browser?.close();
  });

  for (const [i, payload] of CORPUS.entries()) {
    it(`#${i + 1} ${payload.replace(/\s+/g, ' ').slice(0, 60)}`, async () => {
      for (const mode of ['whole', 'streamed'] as const) {
        await page.evaluate(
          async ([text, m]) => {
            // In the page: the few browser globals it uses, typed here (the Node program has no DOM typings).
            const g = globalThis as unknown as PageGlobals;
            delete g.__xss;
            const out = g.document.getElementById('out');
            if (m === 'whole') out.innerHTML = g.renderMarkdown(text);
            else {
              const s = new g.StreamingMarkdown(out);
              for (let k = 0; k < text.length; k += 3) {
                s.append(text.slice(k, k + 3));
                await new Promise((r) => g.requestAnimationFrame(r));
              }
              s.finish();
            }
            for (const el of Array.from(out.querySelectorAll('a, img'))) el.dispatchEvent(new g.MouseEvent('mouseover', { bubbles: true }));
            await new Promise((r) => setTimeout(r, 60));
          },
          [payload, mode] as const,
        );
        assert.equal(await page.evaluate('window.__xss'), undefined, `${mode}: a script ran`);
        assert.deepEqual(await page.evaluate(CHECK), [], `${mode}: dangerous markup survived`);
      }
    });
  }

  it('still renders ordinary markdown: emphasis, links, tables, highlighted code', async () => {
    const html = await page.evaluate(() =>
      (globalThis as unknown as { renderMarkdown(s: string): string }).renderMarkdown(
        '**bold** [site](https://example.com)\n\n| a |\n|---|\n| 1 |\n\n```ts\nconst x: number = 1;\n```',
      ),
    );
    assert.match(html, /<strong>bold<\/strong>/);
    assert.match(html, /<a href="https:\/\/example\.com" rel="noreferrer noopener" target="_blank">site<\/a>/);
    assert.match(html, /<table>/);
    const injected = await page.evaluate(() =>
      (globalThis as unknown as { renderMarkdown(s: string): string }).renderMarkdown('```js" onmouseover="x\ncode\n```'),
    );
    assert.match(injected, /^<pre class="code language-js"><code class="hljs">code\n<\/code><\/pre>/, 'a fence tag cannot add attributes');
    assert.match(html, /<pre class="code language-ts"><code class="hljs"><span class="hljs-keyword">const<\/span>/);
  });

  it('a streaming answer shows its open code block as plain text and colours it once the block closes', async () => {
    const states = await page.evaluate(async () => {
      const g = globalThis as unknown as PageGlobals & { setTimeout(f: () => void, ms: number): void };
      const out = g.document.getElementById('out');
      const s = new g.StreamingMarkdown(out);
      // Each wait: past the renderer's 50 ms between renders, and a frame.
      s.append('Here is the code:\n\n```ts\nconst x: number = 1;\nconst y');
      await new Promise<void>((r) => g.setTimeout(() => g.requestAnimationFrame(() => r()), 80));
      const open = out.innerHTML;
      s.append(' = x + 1;\n```\n\nDone');
      await new Promise<void>((r) => g.setTimeout(() => g.requestAnimationFrame(() => r()), 80));
      const closed = out.innerHTML;
      s.finish();
      return { open, closed, finished: out.innerHTML };
    });
    assert.match(states.open, /<pre class="code language-ts"><code class="hljs">const x: number = 1;/, 'the open block is shown, as plain text');
    assert.doesNotMatch(states.open, /hljs-keyword/);
    assert.match(states.closed, /<span class="hljs-keyword">const<\/span> y = x \+ <span class="hljs-number">1<\/span>;/, 'closed: coloured');
    assert.match(states.finished, /<span class="hljs-keyword">const<\/span> y/);
  });
});
