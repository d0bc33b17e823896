import * as vscode from 'vscode';
import { describeError, tell } from '../../shell/errors';
import type { FeatureHost } from '../../shell/featureHost';
import type { AgentSession } from '../core/sessionStore';
import { AgentSessions } from './agentSessions';

export const SESSION_COMMANDS = {
  start: 'modelGateway.agentSessions.start',
  open: 'modelGateway.agentSessions.open',
  answer: 'modelGateway.agentSessions.answer',
  review: 'modelGateway.agentSessions.review',
  apply: 'modelGateway.agentSessions.apply',
  discard: 'modelGateway.agentSessions.discard',
  stop: 'modelGateway.agentSessions.stop',
  resume: 'modelGateway.agentSessions.resume',
} as const;

/** Background agents in git worktrees, and the Agent Sessions view that lists them. */
export function activateSessions(host: FeatureHost): AgentSessions {
  const { services } = host;
  const sessions = host.own(new AgentSessions(services, host.context));
  const view = host.own(vscode.window.createTreeView('modelGateway.agentSessions', { treeDataProvider: sessions }));
  // A session waiting for the person shows on the container's icon, whatever view is open.
  let shown = 0;
  host.own(
    sessions.onDidChangeTreeData(() => {
      const waiting = sessions.waiting;
      // Set when the count changes only: the workbench draws the icon again for every new badge.
      if (waiting === shown) return;
      shown = waiting;
      view.badge =
        waiting > 0
          ? {
              value: waiting,
              tooltip: waiting === 1 ? vscode.l10n.t('1 agent session waits for you') : vscode.l10n.t('{0} agent sessions wait for you', waiting),
            }
          : undefined;
    }),
  );
  const of = (arg: unknown): AgentSession | undefined => sessions.get(typeof arg === 'string' ? arg : ((arg as AgentSession | undefined)?.id ?? ''));
  const guarded = (fn: (s: AgentSession) => Promise<unknown> | void) => async (arg: unknown) => {
    const s = of(arg);
    if (!s) return;
    try {
      await fn(s);
    } catch (err) {
      void tell(services, 'error', vscode.l10n.t('Agent session “{0}”: {1}', s.title, describeError(services, err).message));
    }
  };
  host.command(SESSION_COMMANDS.start, async (text?: unknown) => {
    // A text given by a caller (the chat's button, or another extension) is shown for the person to
    // start with Enter: nothing spends on their account without their own step.
    const prompt = await vscode.window.showInputBox({
      title: vscode.l10n.t('Start in Background'),
      prompt: vscode.l10n.t('The task: it runs in a git worktree on a new branch; you review and apply its changes.'),
      value: typeof text === 'string' ? text.trim().slice(0, 10_000) : undefined,
      ignoreFocusOut: true,
    });
    if (!prompt?.trim()) return undefined;
    try {
      const s = await sessions.start(prompt.trim());
      if (s) void vscode.commands.executeCommand('modelGateway.agentSessions.focus');
      return s?.id;
    } catch (err) {
      void tell(services, 'error', vscode.l10n.t('The background agent could not start: {0}', describeError(services, err).message));
      return undefined;
    }
  });
  host.command(
    SESSION_COMMANDS.open,
    guarded((s) => sessions.open(s)),
  );
  host.command(
    SESSION_COMMANDS.answer,
    guarded((s) => sessions.showQuestion(s)),
  );
  host.command(
    SESSION_COMMANDS.review,
    guarded((s) => sessions.review(s)),
  );
  host.command(
    SESSION_COMMANDS.apply,
    guarded((s) => sessions.apply(s)),
  );
  host.command(
    SESSION_COMMANDS.discard,
    guarded((s) => sessions.discard(s)),
  );
  host.command(
    SESSION_COMMANDS.stop,
    guarded((s) => sessions.stop(s)),
  );
  // Resume spends on the person's account: from the view's own row it goes at once; called with
  // anything else (an id from another extension), the person confirms first.
  host.command(SESSION_COMMANDS.resume, async (arg: unknown) => {
    const s = of(arg);
    if (!s) return;
    if (!sessions.isOwnRow(arg)) {
      const go = vscode.l10n.t('Resume');
      if (
        (await vscode.window.showWarningMessage(
          vscode.l10n.t('Resume the background agent “{0}”? It goes on in its worktree, on your account.', s.title),
          { modal: true },
          go,
        )) !== go
      )
        return;
    }
    await guarded((x) => sessions.resume(x))(s);
  });
  return sessions;
}
