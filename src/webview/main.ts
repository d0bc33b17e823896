import './language';
import * as l10n from '@vscode/l10n';
import type { AssistantTurn, ContextAttachment, ImageAttachment, UserTurn } from '../common/conversation';
import type { ActiveEditorInfo, FileItem, FixAction, QueuedView, ViewState } from '../common/chatProtocol';
import { condenseButton, meter, placeCondensations, renderConversationCost, renderMeter, rulesRow, setCondensing } from './contextView';
import { approvalRow, approvalSummary, renderUnasked, unaskedRow } from './approvalBar';
import { button, h, icon, vscode } from './dom';
import { closeHistory, historyButton, historyPanel, listenHistory, renderHistory } from './historyPanel';
import { channel, post, request } from './hostLink';
import { readImageFiles } from './imageFiles';
import { MentionPicker } from './mentions';
import { notice, showNotice } from './notice';
import { activeEditorChip, includeActiveEditor, mergeAttachments, planReconcile, upsertTurn } from './reducer';
import { jumpButton, messages, scrollToEnd, thread } from './scrollView';
import { shared, TurnView, userView } from './turnView';
import { announce, assertiveRegion, endOfTurnAnnouncement, politeRegion, TurnNavigation } from './accessibility';

/** The notice shown while a step waits for a decision (hidden again when none waits). */
const stepWaitingText = (): string => l10n.t('A step is waiting for your decision: answer it (just above) before sending.');

/** Turns rendered at once; older ones come back with "Show earlier". */
const DOM_TURN_CAP = 60;

const app = document.getElementById('app')!;
const titleEl = h('h1', { class: 'title', id: 'title' });
const newChatButton = button('', { id: 'new-chat', 'aria-label': l10n.t('New chat'), title: l10n.t('New chat') }, 'add');
/** Pending edits, above the input: always in view whatever the scroll position. */
const approvalBar = h('div', {
  id: 'approval-bar',
  class: 'approval-bar',
  role: 'region',
  'aria-label': l10n.t('Steps waiting for your decision'),
  hidden: true,
});
const modeSelect = h('select', { id: 'mode', 'aria-label': l10n.t('Mode'), title: l10n.t('Mode') });
const modelSelect = h('select', { id: 'model', 'aria-label': l10n.t('Model'), title: l10n.t('Model') });
const formatSelect = h(
  'select',
  { id: 'format', 'aria-label': l10n.t('Wire format'), title: l10n.t('Wire format') },
  h('option', { value: 'auto', text: l10n.t('Format: auto') }),
  h('option', { value: 'chat', text: l10n.t('Chat completions') }),
  h('option', { value: 'messages', text: l10n.t('Messages (caching)') }),
  h('option', { value: 'responses', text: l10n.t('Responses') }),
  h('option', { value: 'gemini', text: l10n.t('Gemini') }),
);
const chips = h('div', { id: 'attachments', class: 'chips', role: 'group', 'aria-label': l10n.t('Attachments') });
const input = h('textarea', {
  id: 'input',
  rows: '3',
  'aria-label': l10n.t('Message'),
  'aria-keyshortcuts': 'Enter Escape Alt+ArrowUp',
  placeholder: l10n.t('Ask about your code… (Enter to send, Shift+Enter for a new line)'),
});
const fileInput = h('input', { id: 'file', type: 'file', accept: 'image/png,image/jpeg,image/webp,image/gif', multiple: true, hidden: true });
const attachButton = button(
  '',
  { id: 'attach', 'aria-label': l10n.t('Attach image'), title: l10n.t('Attach image (PNG, JPEG or WEBP, up to 20 MB)') },
  'file-media',
);
const contextButton = button(
  '',
  { id: 'context', 'aria-label': l10n.t('Add the active file or selection'), title: l10n.t('Add the active file or selection as context') },
  'file-code',
);
const sendButton = button(l10n.t('Send'), { id: 'send', class: 'primary', 'aria-label': l10n.t('Send') }, 'send');
const mentions = new MentionPicker(input, {
  find: async (query, trigger): Promise<FileItem[]> => {
    const reply = await channel.request(trigger === '/' ? { type: 'find-prompts', query } : { type: 'find-files', query });
    return reply.type === 'files' ? reply.items : [];
  },
  picked: (item, trigger) => post(trigger === '/' ? { type: 'use-prompt', id: item.path } : { type: 'attach-file', path: item.path }),
});
const stopButton = button(l10n.t('Stop'), { id: 'stop', class: 'danger', 'aria-label': l10n.t('Stop'), hidden: true }, 'debug-stop');
/** While a reply runs, a message is queued: sent when it ends, or steered into it. */
const queueButton = button(
  l10n.t('Queue'),
  { id: 'queue', 'aria-label': l10n.t('Queue this message'), title: l10n.t('Queue: sent when the reply ends (Enter)'), hidden: true },
  'list-ordered',
);
/** Start in Background: the message runs as an agent session in a git worktree of its own, not in this chat. */
const backgroundButton = button(
  '',
  {
    id: 'background',
    'aria-label': l10n.t('Start in Background'),
    title: l10n.t('Start in Background: run this message as an agent in a git worktree on a new branch, while you go on here'),
  },
  'git-branch',
);
const queuedList = h('div', { id: 'queued', class: 'queued', role: 'region', 'aria-label': l10n.t('Messages waiting to be sent'), hidden: true });

app.append(
  h('header', { class: 'bar' }, historyButton, titleEl, newChatButton),
  historyPanel,
  h('div', { class: 'messages-wrap' }, messages, jumpButton),
  h(
    'footer',
    { class: 'composer' },
    approvalBar,
    queuedList,
    unaskedRow,
    h('div', { class: 'pickers' }, modeSelect, modelSelect, formatSelect),
    meter,
    rulesRow,
    chips,
    notice,
    h('div', { class: 'input-wrap' }, mentions.el, input),
    h(
      'div',
      { class: 'actions' },
      attachButton,
      fileInput,
      contextButton,
      backgroundButton,
      h('span', { class: 'spacer' }),
      stopButton,
      queueButton,
      sendButton,
    ),
  ),
  politeRegion,
  assertiveRegion,
);
const navigation = new TurnNavigation(thread, input);

// ---------- state ----------

let state: ViewState | undefined;
let turns: (UserTurn | AssistantTurn)[] = [];
let showAll = false;
const pendingApprovals = shared.pendingApprovals;
type ApprovalInfo = ViewState['pendingApprovals'][number];
const approvalInfo = new Map<string, ApprovalInfo>();
/** The question being edited (resent in its place), if any. */
let editing: string | undefined;
let images: ImageAttachment[] = [];
let context: ContextAttachment[] = [];
/** The active editor's file, offered as context (a chip), and the file whose chip was removed. */
let activeEditor: ActiveEditorInfo | null = null;
let dismissedActive: string | undefined;
const views = new Map<string, TurnView>();

const saved = (vscode.getState() ?? {}) as { draft?: string };
input.value = saved.draft ?? '';

// ---------- turns ----------

function renderConversation(land = true): void {
  views.clear();
  const shown = showAll ? turns : turns.slice(-DOM_TURN_CAP);
  const nodes: HTMLElement[] = [];
  if (shown.length < turns.length) {
    nodes.push(button(l10n.t('Show {0} earlier messages', turns.length - shown.length), { class: 'earlier', 'data-earlier': 'true' }, 'fold-up'));
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
        h('p', {
          text: state?.configured
            ? l10n.t('Ask anything about your code. The assistant can read, search and (with your approval) edit files in this workspace.')
            : l10n.t('Set the gateway URL and API key first (Model Gateway: Set API Key).'),
        }),
        state && !state.toolsEnabled
          ? h('p', { class: 'muted', text: l10n.t('Workspace tools are off: this workspace is not trusted or has no local folder.') })
          : undefined,
      ),
    );
  }
  thread.replaceChildren(...nodes);
  placeCondensations(thread, state?.conversation?.condensations ?? []);
  navigation.refresh();
  scrollToEnd(land);
}

/**
 * Brings the thread in line with the host's turns without rebuilding it: new turns are added,
 * gone ones removed, changed ones updated; a finished turn that did not change is left alone.
 */
function reconcile(next: (UserTurn | AssistantTurn)[]): void {
  const plan = planReconcile(turns, next);
  if (plan.kind === 'redraw') {
    turns = plan.turns;
    renderConversation(false);
    return;
  }
  for (const id of plan.remove) {
    thread.querySelector(`:scope > [data-turn="${CSS.escape(id)}"]`)?.remove();
    views.delete(id);
  }
  for (const t of plan.update) {
    const v = t.role === 'assistant' ? views.get(t.id) : undefined;
    if (t.role === 'assistant' && v?.changedBy(t)) v.apply(t);
  }
  if (plan.add.length) thread.querySelector('.empty')?.remove();
  for (const t of plan.add) {
    if (t.role === 'user') thread.append(userView(t));
    else {
      const v = new TurnView(t);
      views.set(t.id, v);
      thread.append(v.el);
    }
  }
  turns = next;
  if (turns.length === 0) renderConversation();
  else if (!showAll) trimToCap();
  navigation.refresh();
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
  thread.prepend(button(l10n.t('Show {0} earlier messages', turns.length - DOM_TURN_CAP), { class: 'earlier', 'data-earlier': 'true' }, 'fold-up'));
}

function activeChipTitle(auto: NonNullable<typeof activeEditor>): string {
  if (auto.withheld === 'secret')
    return l10n.t(
      '{0} may hold credentials or keys, so it is not sent with your questions. To send it anyway, use Add Selection to Chat (it asks first).',
      auto.path,
    );
  if (auto.withheld === 'excluded') return l10n.t('{0} is excluded by .gitignore or the exclude settings, so it is not sent with your questions.', auto.path);
  if (auto.tooLarge) return l10n.t('{0} is too large to send whole: select the part you need', auto.path);
  return l10n.t('Sent with your question: {0} (the active editor)', auto.label);
}

function renderChips(): void {
  const auto = activeEditorChip(activeEditor, dismissedActive, context);
  chips.replaceChildren(
    ...(auto
      ? [
          h(
            'span',
            { class: `chip auto${auto.tooLarge || auto.withheld ? ' muted' : ''}`, id: 'active-editor', title: activeChipTitle(auto) },
            icon(auto.withheld === 'secret' ? 'lock' : 'eye'),
            ` ${auto.label} `,
            h('span', {
              class: 'chip-note',
              text:
                auto.withheld === 'secret'
                  ? l10n.t('not sent: may hold secrets')
                  : auto.withheld === 'excluded'
                    ? l10n.t('not sent: excluded')
                    : auto.tooLarge
                      ? l10n.t('too large')
                      : l10n.t('current file'),
            }),
            button('', { 'data-remove-active': 'true', 'aria-label': l10n.t('Do not send {0}', auto.label) }, 'close'),
          ),
        ]
      : []),
    ...images.map((img, i) => {
      const detail = h(
        'select',
        { 'aria-label': l10n.t('Detail for {0}', img.name), 'data-detail': String(i) },
        ...['auto', 'low', 'high'].map((d) => h('option', { value: d, text: l10n.t('detail {0}', d), selected: d === img.detail })),
      );
      return h(
        'span',
        { class: 'chip image' },
        h('img', { src: `data:${img.mediaType};base64,${img.data}`, alt: '' }),
        ` ${img.name} `,
        detail,
        button('', { 'data-remove-image': String(i), 'aria-label': l10n.t('Remove {0}', img.name) }, 'close'),
      );
    }),
    ...context.map((c, i) =>
      h(
        'span',
        { class: 'chip' },
        icon('file-code'),
        ` ${c.label} `,
        button('', { 'data-remove-context': String(i), 'aria-label': l10n.t('Remove {0}', c.label) }, 'close'),
      ),
    ),
  );
}

function applyState(s: ViewState): void {
  state = s;
  shared.fixes = s.fixes;
  shared.modeNames = Object.fromEntries(s.modes.map((m) => [m.id, m.name]));
  renderMeter(s.context, (s.conversation?.turns.length ?? 0) > 0);
  renderConversationCost(s.conversation?.turns ?? []);
  for (const a of s.pendingApprovals) pendingApprovals.add(a.callId);
  titleEl.textContent = s.conversation?.title ?? l10n.t('New conversation');
  modelSelect.replaceChildren(
    ...(s.models.length ? s.models : [s.model]).filter(Boolean).map((m) => h('option', { value: m, text: m, selected: m === s.model })),
  );
  modeSelect.replaceChildren(...s.modes.map((m) => h('option', { value: m.id, text: m.name, title: m.description, selected: m.id === s.mode })));
  modeSelect.title = l10n.t('Mode: {0}', s.modes.find((m) => m.id === s.mode)?.description ?? s.mode);
  modeSelect.hidden = !s.toolsEnabled;
  formatSelect.value = s.formatChoice;
  formatSelect.title = l10n.t('Wire format (now {0})', s.format === 'chat' ? 'chat completions' : s.format);
  sendButton.hidden = s.busy;
  stopButton.hidden = !s.busy;
  queueButton.hidden = !s.busy;
  renderQueued(s.queued ?? [], s.busy);
  contextButton.disabled = false;
  for (const a of s.pendingApprovals) approvalInfo.set(a.callId, a);
  renderApprovalBar();
  renderUnasked(s.unasked);
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
  placeCondensations(thread, s.conversation?.condensations ?? []);
  renderHistory(s);
}

let shownConversation: { id: string } | undefined;

/** The messages waiting for the running reply: each with Steer (into it), Edit and Remove. */
function renderQueued(items: QueuedView[], busy: boolean): void {
  queuedList.hidden = items.length === 0;
  queuedList.replaceChildren(
    ...items.map((q) =>
      h(
        'div',
        { class: `queued-row${q.steer ? ' steer' : ''}`, 'data-queued': q.id },
        icon(q.steer ? 'debug-step-into' : 'clock'),
        h('span', { class: 'queued-text', text: q.text || l10n.t('{0} image(s)', q.images), title: q.text }),
        h('span', { class: 'queued-when muted', text: q.steer ? l10n.t('steers the running reply') : l10n.t('queued') }),
        busy && !q.steer && q.images === 0
          ? button(
              l10n.t('Steer'),
              { 'data-queued-action': 'steer', title: l10n.t('Add it to the running reply: the model reads it with its next request') },
              'debug-step-into',
            )
          : '',
        button('', { 'data-queued-action': 'edit', 'aria-label': l10n.t('Edit'), title: l10n.t('Edit: back into the input') }, 'edit'),
        button('', { 'data-queued-action': 'remove', 'aria-label': l10n.t('Remove'), title: l10n.t('Remove') }, 'close'),
      ),
    ),
  );
}

queuedList.addEventListener('click', (e) => {
  const b = (e.target as HTMLElement).closest<HTMLElement>('[data-queued-action]');
  const id = b?.closest<HTMLElement>('[data-queued]')?.dataset.queued;
  const action = b?.dataset.queuedAction;
  if (id && (action === 'edit' || action === 'remove' || action === 'steer')) post({ type: 'queued', action, id });
});
queueButton.addEventListener('click', () => send());
backgroundButton.addEventListener('click', () => {
  const text = input.value.trim();
  if (!text) {
    showNotice(l10n.t('Type the task first: Start in Background runs it in a git worktree of its own.'), 'info');
    return;
  }
  post({ type: 'background', text });
  input.value = '';
  vscode.setState({ draft: '' });
});

function renderApprovalBar(): void {
  const pending = [...approvalInfo.values()].filter((a) => pendingApprovals.has(a.callId));
  approvalBar.hidden = pending.length === 0;
  approvalBar.replaceChildren(...pending.map(approvalRow));
}

// ---------- input ----------

function send(): void {
  const text = input.value.trim();
  if (!text && images.length === 0) return;
  if (pendingApprovals.size > 0) {
    showNotice(stepWaitingText(), 'info');
    return;
  }
  // While a reply runs the message is queued (the host keeps it); an edit of an earlier question waits for the end.
  if (state?.busy && editing) {
    showNotice(l10n.t('A reply is still running: wait for it, or press Stop (Escape).'), 'info');
    return;
  }
  post({
    type: 'send',
    text,
    images,
    context,
    activeEditor: includeActiveEditor(activeEditor, dismissedActive, context),
    ...(editing ? { replaces: editing } : {}),
  });
  editing = undefined;
  input.classList.remove('editing');
  input.value = '';
  images = [];
  context = [];
  renderChips();
  vscode.setState({ draft: '' });
}

async function addFiles(files: FileList | File[]): Promise<void> {
  await readImageFiles(files, (image) => images.push(image));
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
condenseButton.addEventListener('click', () => {
  setCondensing(true);
  void request({ type: 'condense' }).then((r) => {
    setCondensing(false);
    if (!r.ok) showNotice(r.message ?? l10n.t('The conversation could not be condensed.'), 'error');
    // The new summary's card sits above the newest exchange: brought into view, so it is seen.
    else Array.from(thread.querySelectorAll<HTMLElement>('.condensed')).at(-1)?.scrollIntoView({ block: 'start' });
  });
});
sendButton.addEventListener('click', send);
stopButton.addEventListener('click', () => post({ type: 'stop' }));
modelSelect.addEventListener('change', () => post({ type: 'set-model', model: modelSelect.value }));
modeSelect.addEventListener('change', () => post({ type: 'set-mode', mode: modeSelect.value }));
formatSelect.addEventListener('change', () =>
  post({ type: 'set-format', format: formatSelect.value as 'auto' | 'chat' | 'messages' | 'responses' | 'gemini' }),
);
newChatButton.addEventListener('click', () => post({ type: 'new-conversation' }));
listenHistory(input);

chips.addEventListener('click', (e) => {
  const b = (e.target as HTMLElement).closest('button');
  if (!b) return;
  if (b.dataset.removeImage) images.splice(Number(b.dataset.removeImage), 1);
  if (b.dataset.removeContext) context.splice(Number(b.dataset.removeContext), 1);
  if (b.dataset.removeActive) dismissedActive = activeEditor?.path;
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
  } else if (b.dataset.fork) {
    post({ type: 'fork', turnId: b.dataset.fork });
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
    showNotice(l10n.t('Editing a question: Enter resends it in its place (the answers after it are replaced); Escape cancels.'), 'info');
  } else if (b.dataset.code) {
    const code = b.closest('.code-block')?.querySelector('code')?.textContent ?? '';
    const language = b.closest('.code-block')?.querySelector('pre')?.dataset.lang || undefined;
    post({ type: 'code-action', action: b.dataset.code as 'copy' | 'insert' | 'save' | 'apply', code, language });
  } else if (b.dataset.approve) {
    post({ type: 'approval', callId: b.dataset.approve, accepted: b.dataset.accept === 'true' });
    b.closest('.approval')
      ?.querySelectorAll('button')
      .forEach((x) => (x.disabled = true));
  } else if (b.dataset.diff) post({ type: 'show-diff', callId: b.dataset.diff });
  else if (b.dataset.command) post({ type: 'run-command', command: b.dataset.command as FixAction['command'] });
  else if (b.dataset.retry) post({ type: 'retry' });
  else if (b.dataset.continueWith) {
    post({ type: 'continue-with', turnId: b.dataset.turnId!, model: b.dataset.continueWith });
    b.disabled = true;
  } else if (b.dataset.approvePlan) {
    post({ type: 'approve-plan', turnId: b.dataset.approvePlan });
    b.disabled = true;
  } else if (b.dataset.earlier) {
    showAll = true;
    renderConversation();
  }
});

unaskedRow.addEventListener('click', (e) => {
  const b = (e.target as HTMLElement).closest('button');
  if (b?.id === 'toggle-pause') post({ type: 'toggle-pause' });
  else if (b?.dataset.command) post({ type: 'run-command', command: b.dataset.command as FixAction['command'] });
});

approvalBar.addEventListener('click', (e) => {
  const b = (e.target as HTMLElement).closest('button');
  if (!b) return;
  if (b.dataset.approve) {
    post({ type: 'approval', callId: b.dataset.approve, accepted: b.dataset.accept === 'true', ...(b.dataset.always ? { always: true } : {}) });
    b.closest('.approval-row')
      ?.querySelectorAll('button')
      .forEach((x) => (x.disabled = true));
    // The same decision's buttons in the conversation are done too.
    thread
      .querySelector(`.approval button[data-approve="${CSS.escape(b.dataset.approve)}"]`)
      ?.closest('.approval')
      ?.querySelectorAll('button')
      .forEach((x) => (x.disabled = true));
  } else if (b.dataset.diff) post({ type: 'show-diff', callId: b.dataset.diff });
});

messages.addEventListener('keydown', (e) => {
  const link = e.key === 'Enter' ? openPathOf(e.target) : null;
  if (link) post({ type: 'open-file', path: link.dataset.openPath!, ...(link.dataset.line ? { line: Number(link.dataset.line) } : {}) });
});

document.addEventListener('keydown', (e) => {
  // Escape on a turn went back to the input (TurnNavigation): it stops nothing.
  if (e.defaultPrevented) return;
  if (e.key === 'Escape' && editing) {
    editing = undefined;
    input.classList.remove('editing');
    input.value = '';
  }
  if (e.key === 'Escape' && state?.busy) post({ type: 'stop' });
  if (e.key === 'Escape' && !historyPanel.hidden) closeHistory();
});

// ---------- the end of a turn ----------

/** Turns whose end was announced: each once, however often the host sends them again. */
const announced = new Set<string>();

/** Says how the turn ended, once, and gives the keyboard back to the input if nothing else holds it. */
function turnEnded(t: AssistantTurn): void {
  if (!announced.has(t.id)) {
    announced.add(t.id);
    // The answer as drawn (its markdown rendered a frame later), read as the person would see it.
    requestAnimationFrame(() => {
      const shown = Array.from(views.get(t.id)?.el.querySelectorAll<HTMLElement>('.markdown') ?? [])
        .map((m) => m.innerText)
        .join('\n');
      const said = endOfTurnAnnouncement(
        t,
        shown,
        (shared.fixes[t.id] ?? []).map((f) => f.title),
      );
      if (said) announce(said.text, said.urgent);
    });
  }
  // The Stop or Send button just hid, or the person was in the composer: back to typing. Someone
  // reading the conversation or the history stays where they are.
  const active = document.activeElement;
  if (!active || active === document.body || active === stopButton || composer.contains(active)) input.focus();
}

// ---------- messages from the host ----------

channel.listen((m) => {
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
      if (m.fixes) shared.fixes[t.id] = m.fixes;
      const wasShownAs = turns.find((x): x is AssistantTurn => x.id === t.id && x.role === 'assistant')?.status;
      turns = upsertTurn(turns, t);
      renderConversationCost(turns);
      const v = views.get(t.id);
      if (v) v.apply(t);
      else {
        const nv = new TurnView(t);
        views.set(t.id, nv);
        thread.querySelector('.empty')?.remove();
        thread.append(nv.el);
        navigation.refresh();
      }
      if (t.status !== 'streaming' && wasShownAs !== t.status) turnEnded(t);
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
      const known = pendingApprovals.has(m.callId);
      pendingApprovals.add(m.callId);
      const { type: _type, ...info } = m;
      approvalInfo.set(m.callId, info);
      if (!known)
        announce(
          l10n.t('Waiting for your decision: {0}. Its buttons are just above the message box.', approvalSummary(info)) +
            (info.warning ? ` ${info.warning}` : ''),
        );
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
      if (pendingApprovals.size === 0 && notice.textContent === stepWaitingText()) notice.hidden = true;
      break;
    case 'attach': {
      // The same attachment twice is kept once, and the person is told why nothing was added.
      const before = images.length + context.length;
      ({ images, context } = mergeAttachments({ images, context }, m));
      if (images.length + context.length === before && m.images.length + m.context.length > 0) {
        showNotice(l10n.t('Already attached: {0}.', [...m.context.map((c) => c.label), ...m.images.map(() => l10n.t('the image'))].join(', ')), 'info');
      }
      renderChips();
      input.focus();
      break;
    }
    case 'notice':
      showNotice(m.text, m.level);
      break;
    case 'result':
    case 'files':
      // A reply nobody waits for any more (its view was reloaded): nothing to do.
      break;
    case 'context':
      renderMeter(m.use, turns.length > 0);
      break;
    case 'set-draft':
      input.value = m.text;
      vscode.setState({ draft: m.text });
      input.focus();
      showNotice(m.note, 'info');
      break;
    case 'restore-draft':
      // Not sent: the question comes back (unless something new was typed meanwhile), with why.
      if (!input.value.trim()) input.value = m.text;
      // A queued message taken back to edit goes before what was typed meanwhile: nothing is lost.
      else if (!m.reason) input.value = `${m.text}\n\n${input.value}`;
      vscode.setState({ draft: input.value });
      ({ images, context } = mergeAttachments({ images, context }, m));
      renderChips();
      if (m.reason) showNotice(m.reason, 'error');
      else input.focus();
      break;
    case 'active-editor':
      if (m.editor?.path !== activeEditor?.path) dismissedActive = undefined;
      activeEditor = m.editor;
      renderChips();
      break;
  }
});

post({ type: 'ready' });
input.focus();
