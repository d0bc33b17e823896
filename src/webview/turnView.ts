/** One answer as the view draws it (and a question), updated in place as the host reports. */
import * as l10n from '@vscode/l10n';
import type { AssistantTurn, EditProblems, PlanItem, Step, ToolCallRecord, ToolCallStatus, UserTurn } from '../common/conversation';
import type { FixAction } from '../common/chatProtocol';
import { formatCost } from '../common/money';
import { button, h, icon } from './dom';
import { StreamingMarkdown } from './markdown';
import { formatCount } from '../common/locale';
import { subagentsLine, subagentView } from './subagentView';
import { answeringModel, fallbackText } from './fallbackView';

/** What the turn views share with the rest of the view (set by main.ts). */
export const shared = {
  /** For each errored turn id, the buttons that fix it. */
  fixes: {} as Record<string, FixAction[]>,
  /** Tool calls waiting for Accept or Reject. */
  pendingApprovals: new Set<string>(),
  /** The custom agents' names by mode id, for the line above an answer made in one. */
  modeNames: {} as Record<string, string>,
  /** Keeps the newest content in view (when following, or when forced). */
  scrollToEnd: (force?: boolean): void => void force,
};

const FORMAT_NAMES = { chat: 'chat completions', messages: 'messages', responses: 'responses', gemini: 'Gemini' } as const;

function usageLine(t: AssistantTurn): string {
  const u = t.usage;
  if (!u || (u.input === 0 && u.output === 0)) return '';
  const n = (x: number) => `${u.estimated ? '~' : ''}${formatCount(x)}`;
  const parts = [l10n.t('in {0}', n(u.input)), u.reasoning ? l10n.t('out {0} (reasoning {1})', n(u.output), n(u.reasoning)) : l10n.t('out {0}', n(u.output))];
  if (u.estimated) parts.push(l10n.t('estimated: the gateway sent no usage'));
  if (t.format === 'messages') parts.push(l10n.t('cache read {0}', n(u.cacheRead)), l10n.t('cache write {0}', n(u.cacheWrite)));
  else if (u.cacheRead) parts.push(l10n.t('cached {0}', n(u.cacheRead)));
  const c = t.cost;
  if (c?.dollars !== undefined) {
    parts.push(c.estimated ? l10n.t('~{0} (estimate)', formatCost(c.dollars)) : formatCost(c.dollars));
    if (c.savedDollars)
      parts.push(c.savedDollars > 0 ? l10n.t('cache saved {0}', formatCost(c.savedDollars)) : l10n.t('cache cost {0}', formatCost(-c.savedDollars)));
  } else if (c) {
    parts.push(l10n.t('cost unknown (no price for this model)'));
  }
  const subagents = subagentsLine(t);
  if (subagents) parts.push(c?.dollars !== undefined ? l10n.t('{0}, included', subagents) : subagents);
  return parts.join(' · ');
}

/** The file a tool call read or wrote (not a folder, not a glob), which its card can open. */
function openableFile(call: ToolCallRecord): string | undefined {
  const arg = mainArg(call);
  return /^(read_file|create_file|replace_in_file)$/.test(call.name) && PATH_IN_CODE.test(arg) && call.status !== 'rejected' ? arg : undefined;
}

/**
 * The tool's main argument in the card's summary. A file opens on a click; it is not a link for the
 * keyboard there (a control inside the summary's toggle is one control in another): the open
 * card's body holds the keyboard's link.
 */
function pathArg(call: ToolCallRecord): HTMLElement {
  const file = openableFile(call);
  return h('code', { text: mainArg(call), ...(file ? { class: 'path-link', 'data-open-path': file, title: l10n.t('Open {0}', file) } : {}) });
}

const EDIT_TOOLS = new Set(['create_file', 'replace_in_file', 'rename_symbol']);

function mainArg(call: ToolCallRecord): string {
  try {
    const a = JSON.parse(call.args || '{}') as Record<string, unknown>;
    const v = a.path ?? a.pattern ?? a.query ?? a.command ?? a.symbol;
    return typeof v === 'string' ? v : '';
  } catch {
    return '';
  }
}

function renameQuestion(call: ToolCallRecord): string {
  try {
    const a = JSON.parse(call.args || '{}') as Record<string, unknown>;
    return l10n.t('Rename {0} to {1} everywhere it is used?', String(a.symbol), String(a.new_name));
  } catch {
    return l10n.t('Apply this rename?');
  }
}

/** A tool call's state as the card shows it, in the display language (a function: the language is set after modules load). */
export function statusText(status: ToolCallStatus): string {
  switch (status) {
    case 'running':
      return l10n.t('running');
    case 'awaiting-approval':
      return l10n.t('awaiting approval');
    case 'done':
      return l10n.t('done');
    case 'error':
      return l10n.t('error');
    case 'rejected':
      return l10n.t('rejected');
    case 'not-run':
      return l10n.t('not run');
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

export class TurnView {
  readonly el: HTMLElement;
  private readonly stepsEl = h('div', { class: 'steps' });
  private readonly planEl = h('div', { class: 'plan', role: 'region', 'aria-label': l10n.t('Plan'), hidden: true });
  private readonly footer = h('div', { class: 'turn-footer' });
  private readonly whoEl = h('div', { class: 'who' });
  /** A busy model left for the next of the chain: which, why, and who answered. */
  private readonly fallbackEl = h('div', { class: 'fallback-line muted', role: 'note', hidden: true });
  private readonly markdown: StreamingMarkdown[] = [];
  private readonly toolEls: HTMLElement[] = [];
  private countdown = 0;

  constructor(private turn: AssistantTurn) {
    this.el = h('article', { class: 'turn assistant', 'data-turn': turn.id }, this.whoEl, this.fallbackEl, this.planEl, this.stepsEl, this.footer);
    this.apply(turn);
  }

  /** The header names the model that answered (a fallback may take over mid-turn), and the line under it says why. */
  private renderHeader(turn: AssistantTurn): void {
    const model = answeringModel(turn);
    this.el.dataset.model = model;
    this.whoEl.textContent = `${model} · ${FORMAT_NAMES[turn.format]}${turn.mode ? ` · ${shared.modeNames[turn.mode] ?? turn.mode.replace(/^custom:/, '')}` : ''}`;
    this.whoEl.title = turn.answeredBy && turn.answeredBy !== turn.model ? l10n.t('Asked {0}; answered by {1}', turn.model, turn.answeredBy) : '';
    const line = fallbackText(turn.fallbacks, turn.answeredBy, turn.status);
    this.fallbackEl.hidden = !line;
    this.fallbackEl.replaceChildren(...(line ? [icon('arrow-swap'), ' ', h('span', { text: line })] : []));
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
    const thinkingEl = this.stepsEl.querySelectorAll(':scope > .step')[i]?.querySelector<HTMLDetailsElement>('.thinking');
    if (thinkingEl && step.thinking) {
      thinkingEl.hidden = false;
      thinkingEl.querySelector('.thinking-text')!.textContent = step.thinking;
      const took = (step as { thinkingMs?: number }).thinkingMs;
      thinkingEl.querySelector('summary')!.textContent =
        took !== undefined && this.turn.status !== 'streaming'
          ? took < 1000
            ? l10n.t('Thought for less than a second')
            : l10n.t('Thought for {0} s', (took / 1000).toFixed(1))
          : l10n.t('Thinking');
    }
  }

  private ensureStructure(i: number): void {
    while (this.markdown.length <= i) {
      const thinking = h('details', { class: 'thinking', hidden: true }, h('summary', { text: l10n.t('Thinking') }), h('div', { class: 'thinking-text' }));
      const text = h('div', { class: 'markdown' });
      const tools = h('div', { class: 'tools' });
      this.stepsEl.append(h('div', { class: 'step' }, thinking, text, tools));
      const m = new StreamingMarkdown(text);
      m.onRender = () => {
        decorateCode(text);
        linkPaths(text);
        shared.scrollToEnd();
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
    const calls = (x: AssistantTurn) =>
      x.steps
        .map(
          (st) =>
            `${st.steered?.length ?? 0}:` +
            st.toolCalls
              .map(
                (c) =>
                  `${c.status}${c.edit || c.edits ? '+e' : ''}${c.undone ? '+u' : ''}${c.problems ? `+p${c.problems.settled}${c.problems.lateMs ?? ''}` : ''}`,
              )
              .join(),
        )
        .join('|');
    const plan = (x: AssistantTurn) => JSON.stringify(x.plan ?? null);
    return (
      plan(s) !== plan(t) ||
      s.status !== t.status ||
      s.steps.length !== t.steps.length ||
      s.error?.message !== t.error?.message ||
      (s.fallbacks?.length ?? 0) !== (t.fallbacks?.length ?? 0) ||
      calls(s) !== calls(t) ||
      (shared.fixes[t.id]?.length ?? 0) !== this.fixCount
    );
  }

  private fixCount = 0;

  apply(turn: AssistantTurn): void {
    this.turn = turn;
    this.fixCount = shared.fixes[turn.id]?.length ?? 0;
    this.el.dataset.status = turn.status;
    this.renderHeader(turn);
    turn.steps.forEach((s, i) => {
      this.ensureStep(i, s);
      this.renderTools(i, s.toolCalls);
      // What the person steered with, where the model read it: after this step's results.
      if (s.steered?.length)
        this.toolEls[i].append(
          ...s.steered.map((text) =>
            h(
              'div',
              { class: 'steered', title: l10n.t('Sent with Steer while the reply ran') },
              icon('debug-step-into'),
              ' ',
              h('span', { class: 'muted', text: l10n.t('You, while it worked:') }),
              ' ',
              h('span', { text }),
            ),
          ),
        );
    });
    if (turn.status !== 'streaming') for (const m of this.markdown) m.finish();
    this.renderPlan(turn.plan);
    this.renderFooter();
  }

  private renderTools(i: number, calls: ToolCallRecord[]): void {
    const box = this.toolEls[i];
    box.replaceChildren(
      // A plan update that went through is the plan above the answer; a card for it would only repeat it.
      ...calls
        .filter((c) => !(c.name === 'update_plan' && c.status === 'done'))
        .map((c) => {
          const open = box.querySelector(`details[data-call="${CSS.escape(c.id)}"]`)?.hasAttribute('open');
          const details = h(
            'details',
            { class: `tool ${c.status}`, 'data-call': c.id, open: open ?? false },
            h(
              'summary',
              {},
              icon(STATUS_ICON[c.status] ?? 'tools'),
              ' ',
              h('b', { text: c.name }),
              ' ',
              pathArg(c),
              h('span', { class: 'status', text: statusText(c.status) }),
            ),
            h(
              'div',
              { class: 'tool-body' },
              openableFile(c) &&
                h(
                  'div',
                  {},
                  h('code', {
                    class: 'path-link',
                    'data-open-path': openableFile(c),
                    role: 'link',
                    tabindex: '0',
                    text: l10n.t('Open {0}', openableFile(c) ?? ''),
                  }),
                ),
              h('div', { class: 'label', text: l10n.t('Arguments') }),
              h('pre', { text: truncate(prettyJson(c.args)) }),
              c.result !== undefined && h('div', { class: 'label', text: l10n.t('Result') }),
              c.result !== undefined && h('pre', { text: truncate(c.result) }),
            ),
          );
          const edited = c.edits?.map((e) => e.path) ?? (c.edit ? [c.edit.path] : []);
          if (edited.length > 0 && c.status === 'done') {
            return h(
              'div',
              { class: 'tool-wrap' },
              details,
              // In view without opening the card: what the edit broke is the next thing to read.
              c.problems && !c.undone && problemsView(c.problems),
              c.undone
                ? h('div', {
                    class: 'tool-actions muted',
                    text:
                      edited.length === 1
                        ? l10n.t('Undone: the file is back as it was.')
                        : l10n.t('Undone: the {0} files are back as they were.', edited.length),
                  })
                : h(
                    'div',
                    { class: 'tool-actions' },
                    button(
                      edited.length === 1 ? l10n.t('Undo') : l10n.t('Undo ({0} files)', edited.length),
                      {
                        'data-undo': c.id,
                        'data-turn-id': this.turn.id,
                        title: l10n.t('Put {0} back as {1} before this change', edited.join(', '), edited.length === 1 ? 'it was' : 'they were'),
                      },
                      'discard',
                    ),
                  ),
            );
          }
          // A subagent's line is in view; its own steps fold under it (kept open across updates).
          if (c.subagent) {
            const stepsOpen = box.querySelector(`[data-wrap="${CSS.escape(c.id)}"] details.subagent-steps`)?.hasAttribute('open');
            const view = subagentView(c.subagent);
            if (stepsOpen) view.querySelector('details.subagent-steps')?.setAttribute('open', '');
            return h('div', { class: 'tool-wrap', 'data-wrap': c.id }, details, view);
          }
          // Images a tool returned are in view without opening the card.
          if (c.images?.length && c.status !== 'awaiting-approval') {
            return h(
              'div',
              { class: 'tool-wrap' },
              details,
              h(
                'div',
                { class: 'thumbs tool-images' },
                ...c.images.map((img, i) =>
                  h('img', {
                    src: `data:${img.mediaType};base64,${img.data}`,
                    alt: l10n.t('Image {0} returned by {1}', i + 1, c.name),
                    title: l10n.t('{0} (returned by {1})', img.name, c.name),
                  }),
                ),
              ),
            );
          }
          // Where a command ran is in view without opening its card.
          if (c.placement)
            return h(
              'div',
              { class: 'tool-wrap' },
              details,
              h(
                'div',
                { class: `tool-actions muted placement ${c.placement.sandboxed ? 'inside' : 'outside'}` },
                icon(c.placement.sandboxed ? 'shield' : 'unlock'),
                ' ',
                h('span', { text: c.placement.label }),
              ),
            );
          if (c.status !== 'awaiting-approval' || !shared.pendingApprovals.has(c.id)) return details;
          // The decision itself is made in one place, the bar above the input (always in view): the card only points there.
          return h(
            'div',
            { class: 'tool-wrap' },
            details,
            h(
              'div',
              { class: 'approval waiting muted', role: 'note' },
              icon('arrow-down'),
              ' ',
              h('span', {
                text: EDIT_TOOLS.has(c.name)
                  ? c.name === 'rename_symbol'
                    ? renameQuestion(c)
                    : l10n.t('Apply this change to {0}?', mainArg(c))
                  : c.name === 'run_command'
                    ? l10n.t('Run `{0}`?', mainArg(c))
                    : l10n.t('Allow this {0} call?', c.name),
              }),
              ' ',
              h('span', { text: l10n.t('Your decision: in the bar below.') }),
            ),
          );
        }),
    );
  }

  /** The plan pinned above the answer while it runs: the item in progress kept in view. */
  private renderPlan(plan: PlanItem[] | undefined): void {
    this.planEl.hidden = !plan?.length;
    if (!plan?.length) return;
    const done = plan.filter((i) => i.status === 'done').length;
    const list = h(
      'ol',
      { class: 'plan-items' },
      ...plan.map((i) =>
        h(
          'li',
          {
            class: `plan-item ${i.status}`,
            'aria-label':
              i.status === 'done'
                ? l10n.t('{0} (done)', i.text)
                : i.status === 'in-progress'
                  ? l10n.t('{0} (in progress)', i.text)
                  : l10n.t('{0} (pending)', i.text),
          },
          icon(i.status === 'done' ? 'pass-filled' : i.status === 'in-progress' ? 'loading codicon-modifier-spin' : 'circle-large-outline'),
          h('span', { text: i.text }),
        ),
      ),
    );
    this.planEl.classList.toggle('pinned', this.turn.status === 'streaming');
    this.planEl.replaceChildren(
      h(
        'div',
        { class: 'plan-head' },
        icon('checklist'),
        h('b', { text: l10n.t('Plan') }),
        h('span', { class: 'plan-count', text: l10n.t('{0} of {1} done', done, plan.length) }),
      ),
      list,
    );
    const current =
      list.querySelector<HTMLElement>('.plan-item.in-progress') ?? list.querySelector<HTMLElement>('.plan-item:not(.done)') ?? list.lastElementChild;
    if (current instanceof HTMLElement)
      requestAnimationFrame(() => (list.scrollTop = Math.max(0, current.offsetTop - list.offsetTop - list.clientHeight / 2 + current.offsetHeight / 2)));
  }

  private renderFooter(): void {
    const t = this.turn;
    clearInterval(this.countdown);
    const parts: (Node | string)[] = [];
    if (t.status === 'stopped') parts.push(h('div', { class: 'badge', text: l10n.t('Stopped — the answer above is partial.') }));
    if (t.stepLimitReached)
      parts.push(h('div', { class: 'badge', text: l10n.t('Stopped at the tool-step limit (modelGateway.chat.maxToolSteps). Say “continue” to go on.') }));
    if (t.status === 'error' && t.error) {
      // No alert role: the card is drawn again on reload and updates; the error is announced once when the turn ends (main.ts).
      // The countdown below says the wait: the message's own "Retry in N s." would say it twice.
      const staticWait = t.error.retryAfterMs ? l10n.t('Retry in {0} s.', Math.ceil(t.error.retryAfterMs / 1000)) : '';
      const message = staticWait && t.error.message.endsWith(staticWait) ? t.error.message.slice(0, -staticWait.length).trimEnd() : t.error.message;
      const card = h('div', { class: 'error-card' }, h('div', { class: 'error-text', text: message }));
      const actions = h('div', { class: 'error-actions' });
      for (const f of shared.fixes[t.id] ?? []) actions.append(button(f.title, { 'data-command': f.command }));
      const retry = button(l10n.t('Retry'), { 'data-retry': 'true' }, 'refresh');
      // The answer stopped mid-way on a busy model: the next of the chain takes it up from there.
      if (t.error.continueWith)
        actions.append(
          button(
            l10n.t('Continue with {0}', t.error.continueWith),
            {
              class: 'primary',
              'data-continue-with': t.error.continueWith,
              'data-turn-id': t.id,
              title: l10n.t('Switch the chat to {0} and ask it to go on from where this answer stopped', t.error.continueWith),
            },
            'debug-continue',
          ),
        );
      actions.append(retry);
      card.append(actions);
      if (t.error.retryAfterMs && t.error.retryAfterMs > 0) {
        const until = t.at + t.error.retryAfterMs;
        const wait = h('div', { class: 'countdown' });
        const tick = () => {
          const left = Math.ceil((until - Date.now()) / 1000);
          retry.disabled = left > 0;
          wait.textContent = left > 0 ? l10n.t('Rate limited: you can retry in {0} s.', left) : l10n.t('You can retry now.');
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
    const undoable = t.steps.some((s) => s.toolCalls.some((c) => (c.edit || c.edits?.length) && !c.undone));
    if (undoable && t.status !== 'streaming')
      parts.push(
        h(
          'div',
          { class: 'checkpoint' },
          button(
            l10n.t('Restore to before this turn'),
            {
              'data-restore': t.id,
              title: l10n.t('Put every file this answer changed back as it was (files it created are removed); shows what changes first'),
            },
            'history',
          ),
        ),
      );
    if (t.mode === 'plan' && t.status === 'done' && t.plan?.length)
      parts.push(
        h(
          'div',
          { class: 'plan-approval' },
          h('span', { text: l10n.t('Carry this plan out in Agent mode?') }),
          button(
            l10n.t('Approve plan'),
            {
              class: 'primary',
              'data-approve-plan': t.id,
              title: l10n.t('Switch to Agent mode and carry the plan out (edits and commands still ask as usual)'),
            },
            'check',
          ),
        ),
      );
    const fork = button(
      l10n.t('Fork'),
      { 'data-fork': t.id, title: l10n.t('Fork from here: a new conversation with the turns up to this one (the files stay as they are)') },
      'repo-forked',
    );
    if (t.status === 'done' || t.status === 'stopped')
      parts.push(
        h(
          'div',
          { class: 'answer-actions' },
          button(l10n.t('Regenerate'), { 'data-retry': 'true', title: l10n.t('Ask again for a new answer to the same question') }, 'refresh'),
          fork,
        ),
      );
    else if (t.status === 'error') parts.push(h('div', { class: 'answer-actions' }, fork));
    this.footer.replaceChildren(...parts);
  }
}

/** The problems an edit introduced, under its card: each a link to its line. */
function problemsView(p: EditProblems): HTMLElement {
  const seconds = Math.max(1, Math.round(p.waitedMs / 1000));
  const files = (p.unchecked ?? []).join(', ');
  // Never "no new problems" for a file nobody checked: say so, and which server was waited for.
  const notChecked = () =>
    h(
      'div',
      { class: 'problems unchecked muted', role: 'status' },
      icon('question'),
      ` ${p.server ? l10n.t('Not checked: the {0} server had not reported on {1} after {2} s.', p.server, files, seconds) : l10n.t('Not checked: no language server reported on {0} after {1} s.', files, seconds)}`,
    );
  if (p.settled === 'timeout') return notChecked();
  const total = p.introduced.length + p.more;
  const late = p.lateMs !== undefined ? ` ${l10n.t('(checked {0} s after the edit)', Math.max(1, Math.round(p.lateMs / 1000)))}` : '';
  const partly = p.unchecked?.length ? notChecked() : false;
  if (total === 0)
    return h(
      'div',
      { class: 'problems ok' },
      icon('pass'),
      ` ${p.fixed ? l10n.t('No new problems; {0} fixed', p.fixed) : l10n.t('No new problems')}${late}`,
      partly,
    );
  const errors = p.introduced.filter((x) => x.severity === 'error').length;
  return h(
    'div',
    { class: 'problems bad', role: 'group', 'aria-label': total === 1 ? l10n.t('1 new problem') : l10n.t('{0} new problems', total) },
    h(
      'div',
      { class: 'problems-head' },
      icon(errors ? 'error' : 'warning'),
      ` ${total === 1 ? l10n.t('1 new problem') : l10n.t('{0} new problems', total)}${p.fixed ? ` ${l10n.t('({0} fixed)', p.fixed)}` : ''}${late}`,
    ),
    p.uncheckedBefore?.length
      ? h('div', { class: 'muted', text: l10n.t('{0} had not been checked before the edit: some of these may be older.', p.uncheckedBefore.join(', ')) })
      : false,
    partly,
    ...p.introduced.map((x) =>
      h(
        'div',
        { class: `problem ${x.severity}` },
        icon(x.severity === 'error' ? 'error' : 'warning'),
        ' ',
        h('code', {
          class: 'path-link',
          'data-open-path': x.path,
          'data-line': String(x.line),
          role: 'link',
          tabindex: '0',
          title: l10n.t('Open {0} at line {1}', x.path, x.line),
          text: `${x.path}:${x.line}`,
        }),
        ' ',
        h('span', { text: `${x.message}${x.source || x.code ? ` (${[x.source, x.code].filter(Boolean).join(' ')})` : ''}` }),
      ),
    ),
    p.more ? h('div', { class: 'muted', text: l10n.t('… and {0} more', p.more) }) : false,
    p.elsewhere.length
      ? h('div', { class: 'muted', text: l10n.t('Also more errors in {0}', p.elsewhere.map((e) => `${e.path} (${e.errors})`).join(', ')) })
      : false,
  );
}

function prettyJson(s: string): string {
  try {
    return JSON.stringify(JSON.parse(s), null, 2);
  } catch {
    return s;
  }
}

/** `src/a.ts` or `src/a.ts:12` in inline code: a workspace path, with an optional line. */
export const PATH_IN_CODE = /^(?!https?:)([\w@.-]+(?:\/[\w@.-]+)*\.[A-Za-z0-9]{1,8})(?::(\d+))?$/;

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
    code.title = m[2] ? l10n.t('Open {0} at line {1}', m[1], m[2]) : l10n.t('Open {0}', m[1]);
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
        button('', { 'data-wrap': 'true', 'aria-label': l10n.t('Wrap long lines'), title: l10n.t('Wrap long lines'), 'aria-pressed': 'false' }, 'word-wrap'),
        button('', { 'data-code': 'copy', 'aria-label': l10n.t('Copy code'), title: l10n.t('Copy') }, 'copy'),
        button('', { 'data-code': 'insert', 'aria-label': l10n.t('Insert at cursor'), title: l10n.t('Insert at the cursor') }, 'insert'),
        button(
          '',
          {
            'data-code': 'apply',
            'aria-label': l10n.t('Apply to file'),
            title: l10n.t('Apply to the file in the editor: replaces its selection, or the whole file; shown as a diff to accept or reject'),
          },
          'replace-all',
        ),
        button('', { 'data-code': 'save', 'aria-label': l10n.t('Save as new file'), title: l10n.t('Save as a new file') }, 'save-as'),
      ),
      pre,
    );
  }
}

export function userView(t: UserTurn): HTMLElement {
  const who = h(
    'div',
    { class: 'who' },
    l10n.t('You'),
    button('', { class: 'edit-question', 'data-edit': t.id, 'aria-label': l10n.t('Edit and resend this question'), title: l10n.t('Edit and resend') }, 'edit'),
  );
  const el = h('article', { class: 'turn user', 'data-turn': t.id }, who, h('div', { class: 'user-text', text: t.text }));
  if (t.images.length)
    el.append(
      h(
        'div',
        { class: 'thumbs' },
        ...t.images.map((img) =>
          h('img', { src: `data:${img.mediaType};base64,${img.data}`, alt: img.name, title: l10n.t('{0} (detail {1})', img.name, img.detail) }),
        ),
      ),
    );
  if (t.context.length) el.append(h('div', { class: 'chips static' }, ...t.context.map((c) => h('span', { class: 'chip' }, icon('file-code'), ` ${c.label}`))));
  return el;
}
