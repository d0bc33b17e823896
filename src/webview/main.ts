import type { AssistantTurn, ContextAttachment, ImageAttachment, Step, ToolCallRecord, UserTurn } from '../chat/conversation';
import { ToWebviewSchema, type FixAction, type FromWebview, type ToWebview, type ViewState } from '../chat/protocol';
import { sniffImageType } from '../gateway/core/images';
import { StreamingMarkdown } from './markdown';

declare function acquireVsCodeApi(): { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void };

const vscode = acquireVsCodeApi();
const post = (m: FromWebview) => vscode.postMessage(m);

const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp'];
/** Turns rendered at once; older ones come back with "Show earlier". */
const DOM_TURN_CAP = 60;

type Attrs = Record<string, string | boolean | undefined>;

function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: (Node | string | undefined | false)[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'text') el.textContent = String(v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== undefined && c !== false) el.append(c);
  return el;
}

const icon = (name: string) => h('span', { class: `codicon codicon-${name}`, 'aria-hidden': 'true' });

function button(label: string, attrs: Attrs = {}, iconName?: string): HTMLButtonElement {
  const b = h('button', { type: 'button', ...attrs });
  if (iconName) b.append(icon(iconName));
  if (label) b.append(iconName ? ` ${label}` : label);
  return b;
}

// ---------- layout ----------

const app = document.getElementById('app')!;
const titleEl = h('span', { class: 'title', id: 'title' });
const historyButton = button('', { id: 'history', 'aria-label': 'Conversations', title: 'Conversations', 'aria-expanded': 'false' }, 'history');
const historyPanel = h('div', { id: 'history-panel', class: 'history', role: 'dialog', 'aria-label': 'Conversations', hidden: true });
const messages = h('main', { id: 'messages', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' });
/** The turns; its size changes (markdown drawn late, images loading) keep the view at the newest. */
const thread = h('div', { id: 'thread' });
messages.append(thread);
const jumpButton = button('Jump to newest', { id: 'jump', class: 'jump', 'aria-label': 'Jump to the newest message', hidden: true }, 'arrow-down');
/** Pending edits, above the input: always in view whatever the scroll position. */
const approvalBar = h('div', { id: 'approval-bar', class: 'approval-bar', role: 'region', 'aria-label': 'Edits waiting for your decision', hidden: true });
const modelSelect = h('select', { id: 'model', 'aria-label': 'Model', title: 'Model' });
const formatSelect = h(
  'select',
  { id: 'format', 'aria-label': 'Wire format', title: 'Wire format' },
  h('option', { value: 'auto', text: 'Format: auto' }),
  h('option', { value: 'chat', text: 'Chat completions' }),
  h('option', { value: 'messages', text: 'Messages (caching)' }),
);
const chips = h('div', { id: 'attachments', class: 'chips', 'aria-label': 'Attachments' });
const notice = h('div', { id: 'notice', class: 'notice', role: 'alert', hidden: true });
const input = h('textarea', { id: 'input', rows: '3', 'aria-label': 'Message', placeholder: 'Ask about your code… (Enter to send, Shift+Enter for a new line)' });
const fileInput = h('input', { id: 'file', type: 'file', accept: 'image/png,image/jpeg,image/webp,image/gif', multiple: true, hidden: true });
const attachButton = button('', { id: 'attach', 'aria-label': 'Attach image', title: 'Attach image (PNG, JPEG or WEBP, up to 20 MB)' }, 'file-media');
const contextButton = button('', { id: 'context', 'aria-label': 'Add the active file or selection', title: 'Add the active file or selection as context' }, 'file-code');
const sendButton = button('Send', { id: 'send', class: 'primary', 'aria-label': 'Send' }, 'send');
const stopButton = button('Stop', { id: 'stop', class: 'danger', 'aria-label': 'Stop', hidden: true }, 'debug-stop');

app.append(
  h('header', { class: 'bar' }, historyButton, titleEl),
  historyPanel,
  h('div', { class: 'messages-wrap' }, messages, jumpButton),
  h(
    'footer',
    { class: 'composer' },
    approvalBar,
    h('div', { class: 'pickers' }, modelSelect, formatSelect),
    chips,
    notice,
    input,
    h('div', { class: 'actions' }, attachButton, fileInput, contextButton, h('span', { class: 'spacer' }), stopButton, sendButton),
  ),
);

// ---------- state ----------

let state: ViewState | undefined;
let turns: (UserTurn | AssistantTurn)[] = [];
let fixes: Record<string, FixAction[]> = {};
let showAll = false;
const pendingApprovals = new Set<string>();
type ApprovalInfo = ViewState['pendingApprovals'][number];
const approvalInfo = new Map<string, ApprovalInfo>();
/** The question being edited (resent in its place), if any. */
let editing: string | undefined;
let images: ImageAttachment[] = [];
let context: ContextAttachment[] = [];
const views = new Map<string, TurnView>();

const saved = (vscode.getState() ?? {}) as { draft?: string };
input.value = saved.draft ?? '';

function showNotice(text: string, level: 'info' | 'error' = 'error'): void {
  notice.textContent = text;
  notice.className = `notice ${level}`;
  notice.hidden = false;
  setTimeout(() => {
    if (notice.textContent === text) notice.hidden = true;
  }, 6000);
}

// ---------- staying at the newest ----------

/** Whether the view follows the newest content: true until the person scrolls up. */
let stick = true;
/** scrollTop our own scrolling produced, so its scroll event is not read as the person's. */
let ownScrollTop = -1;

function atBottom(): boolean {
  return messages.scrollHeight - messages.scrollTop - messages.clientHeight < 24;
}

function toBottom(): void {
  messages.scrollTop = messages.scrollHeight;
  ownScrollTop = messages.scrollTop;
  jumpButton.hidden = true;
}

/** Keeps the newest content in view while the person has not scrolled away (or when forced). */
function scrollToEnd(force = false): void {
  if (force) stick = true;
  if (stick) toBottom();
  else jumpButton.hidden = atBottom();
}

messages.addEventListener('scroll', () => {
  if (messages.scrollTop === ownScrollTop) return;
  stick = atBottom();
  jumpButton.hidden = stick;
});
// Markdown renders a frame later and off-screen turns skip layout: whenever the thread changes
// size, follow it if following.
new ResizeObserver(() => scrollToEnd()).observe(thread);
jumpButton.addEventListener('click', () => scrollToEnd(true));

// ---------- turns ----------

function usageLine(t: AssistantTurn): string {
  const u = t.usage;
  if (!u || (u.input === 0 && u.output === 0)) return '';
  const n = (x: number) => `${u.estimated ? '~' : ''}${x.toLocaleString('en-US')}`;
  const parts = [`in ${n(u.input)}`, `out ${n(u.output)}`];
  if (u.estimated) parts.push('estimated: the gateway sent no usage');
  if (t.format === 'messages') parts.push(`cache read ${n(u.cacheRead)}`, `cache write ${n(u.cacheWrite)}`);
  if (t.savedDollars !== undefined && t.savedDollars !== 0) parts.push(`${t.savedDollars > 0 ? 'saved' : 'cache cost'} $${Math.abs(t.savedDollars).toFixed(4)}`);
  return parts.join(' · ');
}

/** The tool's main argument; a file path (not a folder, not a glob) is a link that opens it. */
function pathArg(call: ToolCallRecord): HTMLElement {
  const arg = mainArg(call);
  const el = h('code', { text: arg });
  if (/^(read_file|create_file|replace_in_file)$/.test(call.name) && PATH_IN_CODE.test(arg) && call.status !== 'rejected') {
    el.dataset.openPath = arg;
    el.classList.add('path-link');
    el.setAttribute('role', 'link');
    el.tabIndex = 0;
    el.title = `Open ${arg}`;
  }
  return el;
}

function mainArg(call: ToolCallRecord): string {
  try {
    const a = JSON.parse(call.args || '{}') as Record<string, unknown>;
    const v = a.path ?? a.pattern ?? a.query;
    return typeof v === 'string' ? v : '';
  } catch {
    return '';
  }
}

const STATUS_ICON: Record<string, string> = {
  running: 'loading codicon-modifier-spin',
  'awaiting-approval': 'question',
  done: 'check',
  error: 'error',
  rejected: 'circle-slash',
  'not-run': 'dash',
};

function truncate(s: string, n = 4000): string {
  return s.length > n ? `${s.slice(0, n)}\n… (${s.length - n} more characters)` : s;
}

class TurnView {
  readonly el: HTMLElement;
  private readonly stepsEl = h('div', { class: 'steps' });
  private readonly footer = h('div', { class: 'turn-footer' });
  private readonly markdown: StreamingMarkdown[] = [];
  private readonly toolEls: HTMLElement[] = [];
  private countdown = 0;

  constructor(private turn: AssistantTurn) {
    this.el = h('section', { class: 'turn assistant', 'data-turn': turn.id, 'aria-label': 'Answer' }, h('div', { class: 'who', text: `${turn.model} · ${turn.format === 'messages' ? 'messages' : 'chat completions'}` }), this.stepsEl, this.footer);
    this.apply(turn);
  }

  private ensureStep(i: number, step: Step): void {
    this.ensureStructure(i);
    const m = this.markdown[i];
    if (step.text.length > m.value.length && step.text.startsWith(m.value)) m.append(step.text.slice(m.value.length));
    else if (step.text !== m.value) {
      const fresh = new StreamingMarkdown(m.el, step.text);
      fresh.onRender = m.onRender;
      this.markdown[i] = fresh;
    }
    const thinkingEl = this.stepsEl.children[i]?.querySelector<HTMLDetailsElement>('.thinking');
    if (thinkingEl && step.thinking) {
      thinkingEl.hidden = false;
      thinkingEl.querySelector('.thinking-text')!.textContent = step.thinking;
    }
  }

  private ensureStructure(i: number): void {
    while (this.markdown.length <= i) {
      const thinking = h('details', { class: 'thinking', hidden: true }, h('summary', { text: 'Thinking' }), h('div', { class: 'thinking-text' }));
      const text = h('div', { class: 'markdown' });
      const tools = h('div', { class: 'tools' });
      this.stepsEl.append(h('div', { class: 'step' }, thinking, text, tools));
      const m = new StreamingMarkdown(text);
      m.onRender = () => {
        decorateCode(text);
        linkPaths(text);
        scrollToEnd();
      };
      this.markdown.push(m);
      this.toolEls.push(tools);
    }
  }

  /** A streamed delta goes straight to the step's renderer (no comparison of the whole text). */
  appendText(step: number, delta: string): void {
    this.turn.steps[step] ??= { text: '', toolCalls: [] };
    this.turn.steps[step].text += delta;
    this.ensureStructure(step);
    this.markdown[step].append(delta);
  }

  /** Whether the host's copy of the turn differs from what is shown (finished turns rarely do). */
  changedBy(t: AssistantTurn): boolean {
    const s = this.turn;
    if (t.status === 'streaming' || s.status === 'streaming') return true;
    const calls = (x: AssistantTurn) => x.steps.map((st) => st.toolCalls.map((c) => `${c.status}${c.edit ? '+e' : ''}${c.undone ? '+u' : ''}`).join()).join('|');
    return (
      s.status !== t.status || s.steps.length !== t.steps.length || s.error?.message !== t.error?.message || calls(s) !== calls(t) || (fixes[t.id]?.length ?? 0) !== this.fixCount
    );
  }

  private fixCount = 0;

  apply(turn: AssistantTurn): void {
    this.turn = turn;
    this.fixCount = fixes[turn.id]?.length ?? 0;
    this.el.dataset.status = turn.status;
    turn.steps.forEach((s, i) => {
      this.ensureStep(i, s);
      this.renderTools(i, s.toolCalls);
    });
    if (turn.status !== 'streaming') for (const m of this.markdown) m.finish();
    this.renderFooter();
  }

  private renderTools(i: number, calls: ToolCallRecord[]): void {
    const box = this.toolEls[i];
    box.replaceChildren(
      ...calls.map((c) => {
        const open = box.querySelector(`details[data-call="${CSS.escape(c.id)}"]`)?.hasAttribute('open');
        const details = h(
          'details',
          { class: `tool ${c.status}`, 'data-call': c.id, open: open ?? false },
          h('summary', {}, icon(STATUS_ICON[c.status] ?? 'tools'), ' ', h('b', { text: c.name }), ' ', pathArg(c), h('span', { class: 'status', text: c.status.replace(/-/g, ' ') })),
          h('div', { class: 'tool-body' }, h('div', { class: 'label', text: 'Arguments' }), h('pre', { text: truncate(prettyJson(c.args)) }), c.result !== undefined && h('div', { class: 'label', text: 'Result' }), c.result !== undefined && h('pre', { text: truncate(c.result) })),
        );
        if (c.edit && c.status === 'done') {
          return h(
            'div',
            { class: 'tool-wrap' },
            details,
            c.undone
              ? h('div', { class: 'tool-actions muted', text: 'Undone: the file is back as it was.' })
              : h('div', { class: 'tool-actions' }, button('Undo', { 'data-undo': c.id, 'data-turn-id': this.turn.id, title: `Put ${c.edit.path} back as it was before this change` }, 'discard')),
          );
        }
        if (c.status !== 'awaiting-approval' || !pendingApprovals.has(c.id)) return details;
        return h(
          'div',
          { class: 'tool-wrap' },
          details,
          h(
            'div',
            { class: 'approval', role: 'group', 'aria-label': `Approve ${c.name} ${mainArg(c)}` },
            h('span', { text: `Apply this change to ${mainArg(c)}?` }),
            button('Accept', { class: 'primary', 'data-approve': c.id, 'data-accept': 'true' }, 'check'),
            button('Reject', { 'data-approve': c.id, 'data-accept': 'false' }, 'close'),
            button('Show diff', { 'data-diff': c.id }, 'diff'),
          ),
        );
      }),
    );
  }

  private renderFooter(): void {
    const t = this.turn;
    clearInterval(this.countdown);
    const parts: (Node | string)[] = [];
    if (t.status === 'stopped') parts.push(h('div', { class: 'badge', text: 'Stopped — the answer above is partial.' }));
    if (t.stepLimitReached) parts.push(h('div', { class: 'badge', text: 'Stopped at the tool-step limit (modelGateway.chat.maxToolSteps). Say “continue” to go on.' }));
    if (t.status === 'error' && t.error) {
      const card = h('div', { class: 'error-card', role: 'alert' }, h('div', { class: 'error-text', text: t.error.message }));
      const actions = h('div', { class: 'error-actions' });
      for (const f of fixes[t.id] ?? []) actions.append(button(f.title, { 'data-command': f.command }));
      const retry = button('Retry', { 'data-retry': 'true' }, 'refresh');
      actions.append(retry);
      card.append(actions);
      if (t.error.retryAfterMs && t.error.retryAfterMs > 0) {
        const until = t.at + t.error.retryAfterMs;
        const wait = h('div', { class: 'countdown' });
        const tick = () => {
          const left = Math.ceil((until - Date.now()) / 1000);
          retry.disabled = left > 0;
          wait.textContent = left > 0 ? `Rate limited: you can retry in ${left} s.` : 'You can retry now.';
          if (left <= 0) clearInterval(this.countdown);
        };
        tick();
        this.countdown = window.setInterval(tick, 1000);
        card.insertBefore(wait, actions);
      }
      parts.push(card);
    }
    const usage = usageLine(t);
    if (usage) parts.push(h('div', { class: 'usage', text: usage }));
    const undoable = t.steps.some((s) => s.toolCalls.some((c) => c.edit && !c.undone));
    if (undoable && t.status !== 'streaming') parts.push(h('div', { class: 'checkpoint' }, button('Restore to before this turn', { 'data-restore': t.id, title: 'Put every file this answer changed back as it was (files it created are removed); shows what changes first' }, 'history')));
    if (t.status === 'done' || t.status === 'stopped') parts.push(h('div', { class: 'answer-actions' }, button('Regenerate', { 'data-retry': 'true', title: 'Ask again for a new answer to the same question' }, 'refresh')));
    this.footer.replaceChildren(...parts);
  }
}

function prettyJson(s: string): string {
  try {
    return JSON.stringify(JSON.parse(s), null, 2);
  } catch {
    return s;
  }
}

/** `src/a.ts` or `src/a.ts:12` in inline code: a workspace path, with an optional line. */
const PATH_IN_CODE = /^(?!https?:)([\w@.-]+(?:\/[\w@.-]+)*\.[A-Za-z0-9]{1,8})(?::(\d+))?$/;

/** Makes file paths in an answer's inline code links that open the file (at the line). */
function linkPaths(root: HTMLElement): void {
  for (const code of Array.from(root.querySelectorAll<HTMLElement>(':not(pre) > code:not([data-open-path])'))) {
    const m = PATH_IN_CODE.exec(code.textContent ?? '');
    if (!m) continue;
    code.dataset.openPath = m[1];
    if (m[2]) code.dataset.line = m[2];
    code.classList.add('path-link');
    code.setAttribute('role', 'link');
    code.tabIndex = 0;
    code.title = `Open ${m[1]}${m[2] ? ` at line ${m[2]}` : ''}`;
  }
}

/** Adds Copy / Insert / Save buttons to code blocks that do not have them yet. */
function decorateCode(root: HTMLElement): void {
  for (const pre of Array.from(root.querySelectorAll<HTMLPreElement>('pre.code'))) {
    if (pre.parentElement?.classList.contains('code-block')) continue;
    const wrap = h('div', { class: 'code-block' });
    pre.replaceWith(wrap);
    const lang = /\blanguage-([\w+#-]+)/.exec(pre.className)?.[1] ?? '';
    pre.dataset.lang = lang;
    wrap.append(
      h(
        'div',
        { class: 'code-actions' },
        h('span', { class: 'lang', text: lang }),
        button('', { 'data-wrap': 'true', 'aria-label': 'Wrap long lines', title: 'Wrap long lines', 'aria-pressed': 'false' }, 'word-wrap'),
        button('', { 'data-code': 'copy', 'aria-label': 'Copy code', title: 'Copy' }, 'copy'),
        button('', { 'data-code': 'insert', 'aria-label': 'Insert at cursor', title: 'Insert at the cursor' }, 'insert'),
        button('', { 'data-code': 'save', 'aria-label': 'Save as new file', title: 'Save as a new file' }, 'save-as'),
      ),
      pre,
    );
  }
}

function userView(t: UserTurn): HTMLElement {
  const who = h('div', { class: 'who' }, 'You', button('', { class: 'edit-question', 'data-edit': t.id, 'aria-label': 'Edit and resend this question', title: 'Edit and resend' }, 'edit'));
  const el = h('section', { class: 'turn user', 'data-turn': t.id, 'aria-label': 'Your message' }, who, h('div', { class: 'user-text', text: t.text }));
  if (t.images.length) el.append(h('div', { class: 'thumbs' }, ...t.images.map((img) => h('img', { src: `data:${img.mediaType};base64,${img.data}`, alt: img.name, title: `${img.name} (detail ${img.detail})` }))));
  if (t.context.length) el.append(h('div', { class: 'chips static' }, ...t.context.map((c) => h('span', { class: 'chip' }, icon('file-code'), ` ${c.label}`))));
  return el;
}

function renderConversation(land = true): void {
  views.clear();
  const shown = showAll ? turns : turns.slice(-DOM_TURN_CAP);
  const nodes: HTMLElement[] = [];
  if (shown.length < turns.length) {
    nodes.push(button(`Show ${turns.length - shown.length} earlier messages`, { class: 'earlier', 'data-earlier': 'true' }, 'fold-up'));
  }
  for (const t of shown) {
    if (t.role === 'user') nodes.push(userView(t));
    else {
      const v = new TurnView(t);
      views.set(t.id, v);
      nodes.push(v.el);
    }
  }
  if (turns.length === 0) {
    nodes.push(
      h(
        'div',
        { class: 'empty' },
        h('p', { text: state?.configured ? 'Ask anything about your code. The assistant can read, search and (with your approval) edit files in this workspace.' : 'Set the gateway URL and API key first (Model Gateway: Set API Key).' }),
        state && !state.toolsEnabled ? h('p', { class: 'muted', text: 'Workspace tools are off: this workspace is not trusted or has no local folder.' }) : undefined,
      ),
    );
  }
  thread.replaceChildren(...nodes);
  scrollToEnd(land);
}

/**
 * Brings the thread in line with the host's turns without rebuilding it: new turns are added,
 * gone ones removed, changed ones updated; a finished turn that did not change is left alone.
 */
function reconcile(next: (UserTurn | AssistantTurn)[]): void {
  // New turns come at the end (a retry removes the last ones first); anything else, or a thread
  // past the turn cap, is drawn again.
  const known = new Set(turns.map((t) => t.id));
  const kept = next.filter((t) => known.has(t.id)).map((t) => t.id);
  const order = turns.map((t) => t.id).filter((id) => kept.includes(id));
  const appendedOnly = next.slice(0, kept.length).every((t, i) => t.id === order[i]);
  if (!appendedOnly) {
    turns = next;
    renderConversation(false);
    return;
  }
  const ids = new Set(next.map((t) => t.id));
  for (const el of Array.from(thread.querySelectorAll<HTMLElement>(':scope > [data-turn]'))) {
    if (!ids.has(el.dataset.turn ?? '')) {
      el.remove();
      views.delete(el.dataset.turn ?? '');
    }
  }
  for (const t of next) {
    const present = thread.querySelector(`:scope > [data-turn="${CSS.escape(t.id)}"]`);
    if (!present && !known.has(t.id)) {
      thread.querySelector('.empty')?.remove();
      if (t.role === 'user') thread.append(userView(t));
      else {
        const v = new TurnView(t);
        views.set(t.id, v);
        thread.append(v.el);
      }
    } else if (t.role === 'assistant') {
      const v = views.get(t.id);
      if (v?.changedBy(t)) v.apply(t);
    }
  }
  turns = next;
  if (turns.length === 0) renderConversation();
  else if (!showAll) trimToCap();
}

/** Keeps at most DOM_TURN_CAP turns drawn: the oldest leave, "Show earlier" counts them. */
function trimToCap(): void {
  const drawn = Array.from(thread.querySelectorAll<HTMLElement>(':scope > [data-turn]'));
  if (drawn.length <= DOM_TURN_CAP) return;
  for (const el of drawn.slice(0, drawn.length - DOM_TURN_CAP)) {
    views.delete(el.dataset.turn ?? '');
    el.remove();
  }
  thread.querySelector(':scope > .earlier')?.remove();
  thread.prepend(button(`Show ${turns.length - DOM_TURN_CAP} earlier messages`, { class: 'earlier', 'data-earlier': 'true' }, 'fold-up'));
}

function renderHistory(): void {
  const list = state?.conversations ?? [];
  historyPanel.replaceChildren(
    h('div', { class: 'history-title', text: list.length ? 'Conversations' : 'No saved conversations yet' }),
    ...list.map((c) => {
      const row = h('div', { class: `history-row${c.id === state?.conversation?.id ? ' current' : ''}`, 'data-id': c.id });
      row.append(
        button(c.title, { class: 'history-open', 'data-open': c.id, title: new Date(c.updatedAt).toLocaleString() }),
        button('', { 'data-rename': c.id, 'aria-label': `Rename ${c.title}`, title: 'Rename' }, 'edit'),
        button('', { 'data-delete': c.id, 'aria-label': `Delete ${c.title}`, title: 'Delete' }, 'trash'),
      );
      return row;
    }),
  );
}

function renderChips(): void {
  chips.replaceChildren(
    ...images.map((img, i) => {
      const detail = h('select', { 'aria-label': `Detail for ${img.name}`, 'data-detail': String(i) }, ...['auto', 'low', 'high'].map((d) => h('option', { value: d, text: `detail ${d}`, selected: d === img.detail })));
      return h('span', { class: 'chip image' }, h('img', { src: `data:${img.mediaType};base64,${img.data}`, alt: '' }), ` ${img.name} `, detail, button('', { 'data-remove-image': String(i), 'aria-label': `Remove ${img.name}` }, 'close'));
    }),
    ...context.map((c, i) => h('span', { class: 'chip' }, icon('file-code'), ` ${c.label} `, button('', { 'data-remove-context': String(i), 'aria-label': `Remove ${c.label}` }, 'close'))),
  );
}

function applyState(s: ViewState): void {
  state = s;
  fixes = s.fixes;
  for (const a of s.pendingApprovals) pendingApprovals.add(a.callId);
  titleEl.textContent = s.conversation?.title ?? 'New conversation';
  modelSelect.replaceChildren(...(s.models.length ? s.models : [s.model]).filter(Boolean).map((m) => h('option', { value: m, text: m, selected: m === s.model })));
  formatSelect.value = s.formatChoice;
  formatSelect.title = `Wire format (now ${s.format === 'messages' ? 'messages' : 'chat completions'})`;
  sendButton.hidden = s.busy;
  stopButton.hidden = !s.busy;
  contextButton.disabled = false;
  for (const a of s.pendingApprovals) approvalInfo.set(a.callId, a);
  renderApprovalBar();
  const next = (s.conversation?.turns ?? []) as (UserTurn | AssistantTurn)[];
  // Another conversation (or the first state after a reload): draw it and land at its end.
  // The same one: only what changed, so the view and the scroll position stay.
  if (!shownConversation || shownConversation.id !== (s.conversation?.id ?? '')) {
    // New Chat starts clean: attachments and an edit in progress belong to the conversation left.
    if (shownConversation && !s.conversation) {
      images = [];
      context = [];
      editing = undefined;
      input.classList.remove('editing');
      renderChips();
    }
    shownConversation = { id: s.conversation?.id ?? '' };
    turns = next;
    showAll = false;
    renderConversation();
  } else reconcile(next);
  renderHistory();
}

let shownConversation: { id: string } | undefined;

function renderApprovalBar(): void {
  const pending = [...approvalInfo.values()].filter((a) => pendingApprovals.has(a.callId));
  approvalBar.hidden = pending.length === 0;
  approvalBar.replaceChildren(
    ...pending.map((a) =>
      h(
        'div',
        { class: 'approval-row', 'data-call': a.callId },
        h('span', { class: 'approval-what', title: a.path }, icon(a.kind === 'create' ? 'new-file' : 'edit'), ` ${a.kind === 'create' ? 'Create' : 'Edit'} `, h('b', { class: 'approval-file', text: a.path }), ' ', h('span', { class: 'added', text: `+${a.added}` }), ' ', h('span', { class: 'removed', text: `−${a.removed}` })),
        h(
          'span',
          { class: 'approval-buttons' },
          button('Accept', { class: 'primary', 'data-approve': a.callId, 'data-accept': 'true' }, 'check'),
          button('Reject', { 'data-approve': a.callId, 'data-accept': 'false' }, 'close'),
          button('Show diff', { 'data-diff': a.callId }, 'diff'),
        ),
      ),
    ),
  );
}

// ---------- input ----------

function send(): void {
  const text = input.value.trim();
  if (!text && images.length === 0) return;
  if (pendingApprovals.size > 0) {
    showNotice('An edit is waiting for your decision: Accept or Reject it (just above) before sending.', 'info');
    return;
  }
  if (state?.busy) {
    showNotice('A reply is still running: wait for it, or press Stop (Escape).', 'info');
    return;
  }
  post({ type: 'send', text, images, context, ...(editing ? { replaces: editing } : {}) });
  editing = undefined;
  input.classList.remove('editing');
  input.value = '';
  images = [];
  context = [];
  renderChips();
  vscode.setState({ draft: '' });
}

async function addFiles(files: FileList | File[]): Promise<void> {
  for (const f of Array.from(files)) {
    if (f.type === 'image/gif') {
      showNotice(`${f.name}: GIF images are not supported; use PNG, JPEG or WEBP.`);
      continue;
    }
    if (!IMAGE_TYPES.includes(f.type)) {
      showNotice(`${f.name}: only PNG, JPEG and WEBP images can be attached.`);
      continue;
    }
    if (f.size > MAX_IMAGE_BYTES) {
      showNotice(`${f.name} is ${(f.size / 1024 / 1024).toFixed(1)} MB; images are limited to 20 MB.`);
      continue;
    }
    // The bytes decide the type, not the file name or the browser's label.
    const actual = sniffImageType(new Uint8Array(await f.slice(0, 32).arrayBuffer()));
    if (!actual || !(IMAGE_TYPES as readonly string[]).includes(actual)) {
      showNotice(`${f.name || 'The pasted image'} is ${actual ? `a ${actual.slice(6).toUpperCase()} image` : 'not an image'} by its content; only PNG, JPEG and WEBP can be attached.`);
      continue;
    }
    const data = await new Promise<string>((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(typeof reader.result === 'string' ? reader.result.replace(/^data:[^,]*,/, '') : '');
      reader.onerror = () => reject(reader.error ?? new Error('could not read the file'));
      reader.readAsDataURL(f);
    });
    images.push({ name: f.name || 'pasted image', mediaType: actual as ImageAttachment['mediaType'], data, detail: 'auto' });
  }
  renderChips();
}

input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send();
  }
});
input.addEventListener('input', () => vscode.setState({ draft: input.value }));
input.addEventListener('paste', (e) => {
  const files = Array.from(e.clipboardData?.files ?? []).filter((f) => f.type.startsWith('image/'));
  if (files.length) {
    e.preventDefault();
    void addFiles(files);
  }
});
const composer = app.querySelector('footer')!;
composer.addEventListener('dragover', (e) => {
  e.preventDefault();
  composer.classList.add('drop');
});
composer.addEventListener('dragleave', () => composer.classList.remove('drop'));
composer.addEventListener('drop', (e) => {
  e.preventDefault();
  composer.classList.remove('drop');
  if (e.dataTransfer?.files.length) void addFiles(e.dataTransfer.files);
});
fileInput.addEventListener('change', () => {
  if (fileInput.files) void addFiles(fileInput.files).then(() => (fileInput.value = ''));
});
attachButton.addEventListener('click', () => fileInput.click());
contextButton.addEventListener('click', () => post({ type: 'add-context' }));
sendButton.addEventListener('click', send);
stopButton.addEventListener('click', () => post({ type: 'stop' }));
modelSelect.addEventListener('change', () => post({ type: 'set-model', model: modelSelect.value }));
formatSelect.addEventListener('change', () => post({ type: 'set-format', format: formatSelect.value as 'auto' | 'chat' | 'messages' }));
historyButton.addEventListener('click', () => {
  historyPanel.hidden = !historyPanel.hidden;
  historyButton.setAttribute('aria-expanded', String(!historyPanel.hidden));
  if (!historyPanel.hidden) historyPanel.querySelector<HTMLButtonElement>('button')?.focus();
});

chips.addEventListener('click', (e) => {
  const b = (e.target as HTMLElement).closest('button');
  if (!b) return;
  if (b.dataset.removeImage) images.splice(Number(b.dataset.removeImage), 1);
  if (b.dataset.removeContext) context.splice(Number(b.dataset.removeContext), 1);
  renderChips();
});
chips.addEventListener('change', (e) => {
  const s = e.target as HTMLSelectElement;
  if (s.dataset.detail) images[Number(s.dataset.detail)].detail = s.value as ImageAttachment['detail'];
});

function openPathOf(target: EventTarget | null): HTMLElement | null {
  return (target as HTMLElement | null)?.closest<HTMLElement>('[data-open-path]') ?? null;
}

messages.addEventListener('click', (e) => {
  const link = openPathOf(e.target);
  if (link) {
    // In a tool card's summary the click must not also fold the card.
    e.preventDefault();
    post({ type: 'open-file', path: link.dataset.openPath!, ...(link.dataset.line ? { line: Number(link.dataset.line) } : {}) });
    return;
  }
  const b = (e.target as HTMLElement).closest('button');
  if (!b) return;
  if (b.dataset.undo) {
    post({ type: 'undo-edit', turnId: b.dataset.turnId!, callId: b.dataset.undo });
  } else if (b.dataset.restore) {
    post({ type: 'restore-turn', turnId: b.dataset.restore });
  } else if (b.dataset.wrap) {
    const block = b.closest('.code-block');
    const on = !block?.classList.contains('wrap');
    block?.classList.toggle('wrap', on);
    b.setAttribute('aria-pressed', String(on));
  } else if (b.dataset.edit) {
    const t = turns.find((x): x is UserTurn => x.id === b.dataset.edit && x.role === 'user');
    if (!t) return;
    editing = t.id;
    input.value = t.text;
    input.classList.add('editing');
    input.focus();
    showNotice('Editing a question: Enter resends it in its place (the answers after it are replaced); Escape cancels.', 'info');
  } else if (b.dataset.code) {
    const code = b.closest('.code-block')?.querySelector('code')?.textContent ?? '';
    const language = b.closest('.code-block')?.querySelector('pre')?.dataset.lang || undefined;
    post({ type: 'code-action', action: b.dataset.code as 'copy' | 'insert' | 'save', code, language });
  } else if (b.dataset.approve) {
    post({ type: 'approval', callId: b.dataset.approve, accepted: b.dataset.accept === 'true' });
    b.closest('.approval')?.querySelectorAll('button').forEach((x) => (x.disabled = true));
  } else if (b.dataset.diff) post({ type: 'show-diff', callId: b.dataset.diff });
  else if (b.dataset.command) post({ type: 'run-command', command: b.dataset.command as FixAction['command'] });
  else if (b.dataset.retry) post({ type: 'retry' });
  else if (b.dataset.earlier) {
    showAll = true;
    renderConversation();
  }
});

approvalBar.addEventListener('click', (e) => {
  const b = (e.target as HTMLElement).closest('button');
  if (!b) return;
  if (b.dataset.approve) {
    post({ type: 'approval', callId: b.dataset.approve, accepted: b.dataset.accept === 'true' });
    b.closest('.approval-row')?.querySelectorAll('button').forEach((x) => (x.disabled = true));
    // The same decision's buttons in the conversation are done too.
    thread.querySelector(`.approval button[data-approve="${CSS.escape(b.dataset.approve)}"]`)?.closest('.approval')?.querySelectorAll('button').forEach((x) => (x.disabled = true));
  } else if (b.dataset.diff) post({ type: 'show-diff', callId: b.dataset.diff });
});

historyPanel.addEventListener('click', (e) => {
  const b = (e.target as HTMLElement).closest('button');
  if (!b) return;
  if (b.dataset.open) {
    post({ type: 'open-conversation', id: b.dataset.open });
    historyPanel.hidden = true;
  } else if (b.dataset.delete) {
    if (b.dataset.confirm === 'true') post({ type: 'delete-conversation', id: b.dataset.delete });
    else {
      b.dataset.confirm = 'true';
      b.classList.add('danger');
      b.title = 'Click again to delete';
      b.setAttribute('aria-label', 'Click again to delete');
      setTimeout(() => {
        b.dataset.confirm = '';
        b.classList.remove('danger');
      }, 3000);
    }
  } else if (b.dataset.rename) {
    const row = b.closest('.history-row')!;
    const current = row.querySelector('.history-open')?.textContent ?? '';
    const field = h('input', { type: 'text', value: current, 'aria-label': 'New title', class: 'rename' });
    row.replaceChildren(field);
    field.focus();
    field.select();
    const done = (save: boolean) => {
      if (save && field.value.trim()) post({ type: 'rename-conversation', id: b.dataset.rename!, title: field.value.trim() });
      else renderHistory();
    };
    field.addEventListener('keydown', (k) => {
      if (k.key === 'Enter') done(true);
      if (k.key === 'Escape') done(false);
    });
    field.addEventListener('blur', () => done(true));
  }
});

messages.addEventListener('keydown', (e) => {
  const link = e.key === 'Enter' ? openPathOf(e.target) : null;
  if (link) post({ type: 'open-file', path: link.dataset.openPath!, ...(link.dataset.line ? { line: Number(link.dataset.line) } : {}) });
});

document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && editing) {
    editing = undefined;
    input.classList.remove('editing');
    input.value = '';
  }
  if (e.key === 'Escape' && state?.busy) post({ type: 'stop' });
  if (e.key === 'Escape' && !historyPanel.hidden) historyPanel.hidden = true;
});

// ---------- messages from the host ----------

window.addEventListener('message', (e: MessageEvent<unknown>) => {
  // Checked on arrival: a message of another shape is dropped, never half-applied.
  const checked = ToWebviewSchema.safeParse(e.data);
  if (!checked.success) {
    console.warn('Model Gateway: ignored a malformed message from the extension', checked.error.issues[0]);
    return;
  }
  const m = e.data as ToWebview;
  switch (m.type) {
    case 'state':
      applyState(m.state);
      break;
    case 'text': {
      const v = views.get(m.turnId);
      v?.appendText(m.step, m.delta);
      break;
    }
    case 'turn': {
      const t = m.turn;
      if (m.fixes) fixes[t.id] = m.fixes;
      const i = turns.findIndex((x) => x.id === t.id);
      if (i >= 0) turns[i] = t;
      else turns.push(t);
      const v = views.get(t.id);
      if (v) v.apply(t);
      else {
        const nv = new TurnView(t);
        views.set(t.id, nv);
        thread.querySelector('.empty')?.remove();
        thread.append(nv.el);
      }
      if (t.status !== 'streaming' && state) {
        state.busy = false;
        sendButton.hidden = false;
        stopButton.hidden = true;
      }
      // An error card must be seen: it brings the view to the end even if scrolled away.
      scrollToEnd(t.status === 'error');
      break;
    }
    case 'approval': {
      pendingApprovals.add(m.callId);
      approvalInfo.set(m.callId, { callId: m.callId, path: m.path, kind: m.kind, added: m.added, removed: m.removed });
      renderApprovalBar();
      const owner = turns.find((t): t is AssistantTurn => t.role === 'assistant' && t.steps.some((s) => s.toolCalls.some((c) => c.id === m.callId)));
      if (owner) views.get(owner.id)?.apply(owner);
      break;
    }
    case 'approval-done':
      pendingApprovals.delete(m.callId);
      approvalInfo.delete(m.callId);
      renderApprovalBar();
      // The reason given for not sending is over once nothing waits any more.
      if (pendingApprovals.size === 0 && notice.textContent?.startsWith('An edit is waiting')) notice.hidden = true;
      break;
    case 'attach':
      // The same attachment twice is kept once.
      for (const img of m.images) if (!images.some((x) => x.data === img.data)) images.push(img);
      for (const c of m.context) if (!context.some((x) => x.label === c.label && x.text === c.text)) context.push(c);
      renderChips();
      input.focus();
      break;
    case 'notice':
      showNotice(m.text, m.level);
      break;
  }
});

post({ type: 'ready' });
input.focus();
