import * as l10n from '@vscode/l10n';
import type { Unasked, ViewState } from '../common/chatProtocol';
import { button, h, icon } from './dom';

type ApprovalInfo = ViewState['pendingApprovals'][number];

/** One pending decision in the bar above the input: an edit (with its diff), a command or a tool call. */
export function approvalRow(a: ApprovalInfo): HTMLElement {
  if (a.kind === 'sampling') return samplingRow(a);
  if (a.kind === 'command' || a.kind === 'tool') return actionRow(a);
  return h(
    'div',
    { class: `approval-row${a.warning ? ' sensitive' : ''}`, 'data-call': a.callId },
    a.warning
      ? h('div', { class: 'approval-warning' }, icon('warning'), ' ', h('span', { text: l10n.t('{0} Read the whole diff before you accept.', a.warning) }))
      : undefined,
    h(
      'span',
      { class: 'approval-what', title: a.path },
      icon(a.kind === 'create' ? 'new-file' : 'edit'),
      h('span', { class: 'approval-verb', text: a.kind === 'create' ? l10n.t('Create') : l10n.t('Edit') }),
      h('b', { class: 'approval-file', text: a.path }),
      ' ',
      h('span', { class: 'added', text: `+${a.added}` }),
      ' ',
      h('span', { class: 'removed', text: `−${a.removed}` }),
    ),
    a.files
      ? h('div', { class: 'approval-files muted', title: a.files.join('\n'), text: l10n.t('{0} files: {1}', a.files.length, a.files.join(', ')) })
      : undefined,
    h(
      'span',
      { class: 'approval-buttons' },
      button(l10n.t('Accept'), { class: 'primary', 'data-approve': a.callId, 'data-accept': 'true' }, 'check'),
      button(l10n.t('Reject'), { 'data-approve': a.callId, 'data-accept': 'false' }, 'close'),
      button(l10n.t('Show diff'), { 'data-diff': a.callId }, 'diff'),
    ),
    a.preview ? inlineDiff(a.preview) : undefined,
  );
}

/** What a pending decision is about, in a few words: for the announcement when it arrives. */
export function approvalSummary(a: ApprovalInfo): string {
  switch (a.kind) {
    case 'create':
      return l10n.t('create {0}', a.path);
    case 'command':
      return l10n.t('run {0}', a.action ?? '');
    case 'tool':
      return l10n.t('call {0} ({1})', a.action ?? '', a.path);
    case 'sampling':
      return l10n.t('MCP server {0} asks {1}', a.path, a.action ?? '');
    case 'edit':
      return l10n.t('edit {0}', a.path);
  }
}

/** A command (its exact line and folder) or a tool call (server, tool, arguments) waiting for a yes. */
function actionRow(a: ApprovalInfo): HTMLElement {
  const command = a.kind === 'command';
  return h(
    'div',
    { class: `approval-row action ${a.kind}`, 'data-call': a.callId },
    h(
      'div',
      { class: 'approval-what' },
      icon(command ? 'terminal' : 'tools'),
      ' ',
      h('span', {
        text: command
          ? a.place === 'sandbox'
            ? a.network?.length
              ? l10n.t('Run in the sandbox, with the network to {0}, in {1}:', a.network.join(', '), a.path)
              : l10n.t('Run in the sandbox, in {0}:', a.path)
            : a.place === 'outside'
              ? l10n.t('Run outside the sandbox, in {0}:', a.path)
              : l10n.t('Run in {0}:', a.path)
          : a.price
            ? l10n.t('Call {0} ({1}) · {2}', a.action ?? '', a.path, a.price)
            : l10n.t('Call {0} ({1})', a.action ?? '', a.path),
      }),
    ),
    command
      ? h('pre', { class: 'approval-command', 'aria-label': l10n.t('Command line'), text: a.action ?? '' })
      : a.args && a.args !== '{}'
        ? h('pre', { class: 'approval-args', 'aria-label': l10n.t('Arguments'), text: prettyArgs(a.args) })
        : undefined,
    a.reason ? h('div', { class: 'approval-reason muted', text: l10n.t('Asks because {0}.', a.reason) }) : undefined,
    h(
      'span',
      { class: 'approval-buttons' },
      button(command ? l10n.t('Run') : l10n.t('Allow'), { class: 'primary', 'data-approve': a.callId, 'data-accept': 'true' }, command ? 'play' : 'check'),
      a.always
        ? button(
            l10n.t('Always allow'),
            {
              'data-approve': a.callId,
              'data-accept': 'true',
              'data-always': 'true',
              title: l10n.t('From now on, run {0} without asking (your user settings)', command ? `“${a.always}”` : a.always),
            },
            'check-all',
          )
        : undefined,
      button(l10n.t('Reject'), { 'data-approve': a.callId, 'data-accept': 'false' }, 'close'),
    ),
  );
}

/** An MCP server asking the person's model for an answer: the server, the model, the price, the messages. */
function samplingRow(a: ApprovalInfo): HTMLElement {
  return h(
    'div',
    { class: 'approval-row action sampling', 'data-call': a.callId },
    h(
      'div',
      { class: 'approval-what' },
      icon('sparkle'),
      ' ',
      h(
        'span',
        {},
        `${l10n.t('MCP server {0} asks', a.path)} `,
        h('b', { class: 'approval-model', text: a.action ?? '' }),
        a.price ? h('span', { class: 'approval-price', text: ` · ${a.price}` }) : undefined,
      ),
    ),
    a.args ? h('pre', { class: 'approval-args', 'aria-label': l10n.t('What the server sends to the model'), text: a.args }) : undefined,
    a.reason ? h('div', { class: 'approval-reason muted', text: l10n.t('Asks because {0}.', a.reason) }) : undefined,
    h(
      'span',
      { class: 'approval-buttons' },
      button(l10n.t('Allow'), { class: 'primary', 'data-approve': a.callId, 'data-accept': 'true' }, 'check'),
      a.always
        ? button(
            l10n.t('Always allow'),
            { 'data-approve': a.callId, 'data-accept': 'true', 'data-always': 'true', title: l10n.t('From now on, let {0} without asking', a.always) },
            'check-all',
          )
        : undefined,
      button(l10n.t('Reject'), { 'data-approve': a.callId, 'data-accept': 'false' }, 'close'),
    ),
  );
}

function prettyArgs(args: string): string {
  try {
    const text = JSON.stringify(JSON.parse(args), null, 2);
    return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
  } catch {
    return args.slice(0, 2000);
  }
}

/** A small change shown where the decision is made: removed and added lines, a line of context each side. */
function inlineDiff(preview: NonNullable<ApprovalInfo['preview']>): HTMLElement {
  return h(
    'pre',
    { class: 'inline-diff', 'aria-label': l10n.t('Change from line {0}', preview.startLine) },
    ...preview.lines.map((l) =>
      h('div', { class: l.kind === '+' ? 'added-line' : l.kind === '-' ? 'removed-line' : 'context-line', text: `${l.kind} ${l.text}` }),
    ),
  );
}

/** The line that says what runs without asking, with the one button that pauses it all. */
export const unaskedRow = h('div', { id: 'unasked', class: 'unasked', hidden: true });

export function renderUnasked(u: Unasked | undefined): void {
  unaskedRow.hidden = !u;
  if (!u) return;
  unaskedRow.classList.toggle('paused', u.paused);
  const what = u.paused
    ? l10n.t('Auto-approval paused: everything asks.')
    : u.parts.length
      ? l10n.t('Runs unasked: {0}', u.parts.join(' · '))
      : l10n.t('Everything asks.');
  unaskedRow.replaceChildren(
    icon(u.paused ? 'debug-pause' : 'unlock'),
    h('span', {
      class: 'unasked-text',
      text: what,
      title: l10n.t('Set in modelGateway.agent.autoApprove and modelGateway.agent.allowedCommands (user settings)'),
    }),
    button(
      u.paused ? l10n.t('Resume') : l10n.t('Pause'),
      {
        id: 'toggle-pause',
        'aria-pressed': String(u.paused),
        title: u.paused ? l10n.t('Let what is allowed run unasked again') : l10n.t('Make everything ask, from now on'),
      },
      u.paused ? 'play' : 'debug-pause',
    ),
    ...(u.waiting?.length
      ? [
          h(
            'div',
            { class: 'mcp-waiting' },
            icon('shield'),
            h('span', {
              class: 'mcp-waiting-text',
              text:
                u.waiting.length === 1
                  ? l10n.t('MCP: {0} waits for you to review its command line.', `"${u.waiting[0]}"`)
                  : l10n.t('MCP: {0} wait for you to review their command line.', u.waiting.map((n) => `"${n}"`).join(', ')),
            }),
            button(
              l10n.t('Review'),
              { 'data-command': 'modelGateway.mcp.reviewWaiting', title: l10n.t('See each command line and start the server, or not') },
              'shield',
            ),
          ),
        ]
      : []),
  );
}
