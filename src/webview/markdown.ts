import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked } from 'marked';
import { escapeHtml } from '../common/html';

for (const [name, lang] of Object.entries({ bash, c, cpp, css, diff, go, java, javascript, json, markdown, python, rust, sql, typescript, xml, yaml })) {
  hljs.registerLanguage(name, lang);
}
hljs.registerAliases(['sh', 'shell', 'zsh'], { languageName: 'bash' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['js', 'jsx', 'mjs', 'cjs'], { languageName: 'javascript' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });

/** Off while a streaming answer's open code block is rendered: it is highlighted once, when it closes. */
let highlighting = true;

function codeBlock(code: string, info: string | undefined): string {
  const lang = /^\S*/.exec(info ?? '')?.[0] ?? '';
  const language = highlighting && lang && hljs.getLanguage(lang) ? lang : undefined;
  const body = language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : escapeHtml(code);
  const tag = lang.replace(/[^\w+#-]/g, '').slice(0, 30);
  return `<pre class="code${tag ? ` language-${tag}` : ''}"><code class="hljs">${body}</code></pre>`;
}

// GitHub-flavoured markdown (tables, strikethrough, bare links). Raw HTML in answers is shown as
// text; DOMPurify then checks the result again.
const md = new Marked({
  gfm: true,
  renderer: {
    code: ({ text, lang }) => codeBlock(text.endsWith('\n') ? text : `${text}\n`, lang),
    html: ({ text }) => escapeHtml(text),
  },
});

const PURIFY = {
  ALLOWED_TAGS: [
    'a',
    'b',
    'blockquote',
    'br',
    'code',
    'del',
    'em',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'hr',
    'i',
    'li',
    'ol',
    'p',
    'pre',
    's',
    'span',
    'strong',
    'sub',
    'sup',
    'table',
    'tbody',
    'td',
    'th',
    'thead',
    'tr',
    'ul',
    'img',
  ],
  ALLOWED_ATTR: ['href', 'title', 'class', 'alt', 'src', 'align', 'start'],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#)/i,
  ALLOW_DATA_ATTR: false,
};

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('rel', 'noreferrer noopener');
    node.setAttribute('target', '_blank');
  }
});

/** Markdown to sanitised HTML: no script, no event handler, no style, no javascript: link. */
export function renderMarkdown(src: string): string {
  return DOMPurify.sanitize(md.parse(src, { async: false }), PURIFY);
}

/** The shortest time between two renders of a streaming answer (20 a second reads as smooth). */
const RENDER_INTERVAL_MS = 50;

/**
 * Renders a growing markdown text without re-rendering it whole on every chunk: text up to the
 * last block boundary outside a code fence is rendered once and kept; only the open tail is
 * rendered again, in an animation frame at most every RENDER_INTERVAL_MS, and a code block in it
 * is highlighted only once it has closed. `finish()` renders the
 * whole text once, so the final result is exactly what a full render gives.
 */
export class StreamingMarkdown {
  private text = '';
  private committed = 0;
  private scanFrom = 0;
  private inFence = false;
  private lastBoundary = 0;
  private frame = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private renderedAt = -Infinity;
  private readonly done: HTMLElement;
  private readonly tail: HTMLElement;
  onRender?: () => void;

  constructor(
    readonly el: HTMLElement,
    initial = '',
  ) {
    this.done = document.createElement('div');
    this.tail = document.createElement('div');
    el.replaceChildren(this.done, this.tail);
    if (initial) this.append(initial);
  }

  get value(): string {
    return this.text;
  }

  append(delta: string): void {
    this.text += delta;
    if (this.frame || this.timer) return;
    // At most one render per RENDER_INTERVAL_MS: each one lays the thread out again, and a fast
    // stream at one render per frame spent most of the view's time on layout.
    const wait = this.renderedAt + RENDER_INTERVAL_MS - performance.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.frame = requestAnimationFrame(() => this.flush());
      }, wait);
    } else this.frame = requestAnimationFrame(() => this.flush());
  }

  private scan(): void {
    // Walk complete lines added since the last scan, tracking code fences and blank lines.
    let pos = this.scanFrom;
    for (;;) {
      const nl = this.text.indexOf('\n', pos);
      if (nl === -1) break;
      const line = this.text.slice(pos, nl);
      if (/^\s{0,3}(```|~~~)/.test(line)) this.inFence = !this.inFence;
      else if (!this.inFence && line.trim() === '') this.lastBoundary = nl + 1;
      pos = nl + 1;
    }
    this.scanFrom = pos;
  }

  private flush(): void {
    this.frame = 0;
    this.renderedAt = performance.now();
    this.scan();
    if (this.lastBoundary > this.committed) {
      const block = document.createElement('div');
      block.innerHTML = renderMarkdown(this.text.slice(this.committed, this.lastBoundary));
      this.done.append(...Array.from(block.childNodes));
      this.committed = this.lastBoundary;
    }
    // An open code block grows with every render: its colours wait until it closes (hljs over the
    // whole block on each render was the tail's largest cost).
    highlighting = !this.inFence;
    try {
      this.tail.innerHTML = renderMarkdown(this.text.slice(this.committed));
    } finally {
      highlighting = true;
    }
    this.onRender?.();
  }

  finish(): void {
    if (this.frame) cancelAnimationFrame(this.frame);
    clearTimeout(this.timer);
    this.timer = undefined;
    this.frame = 0;
    this.done.innerHTML = renderMarkdown(this.text);
    this.tail.replaceChildren();
    this.committed = this.text.length;
    this.onRender?.();
  }
}
