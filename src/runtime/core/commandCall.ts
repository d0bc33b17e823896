/**
 * A run_command call from start to end, the same for every surface (the chat, background agents):
 * the policy decides (`toolPolicy.ts`), the sandbox holds what runs, the person is asked only for
 * what the sandbox cannot hold.
 *
 * With the sandbox on (where it works):
 * - a line the deny list names is refused, as always;
 * - any other line runs in the sandbox without a question (unless the person turned that off, paused
 *   auto-approval, or turned the terminal's auto-approval off: then it asks, and still runs inside);
 * - the network it needs asks once, naming the hosts: up front when the model names them
 *   (`network`), or after a sandboxed run failed and the proxy refused hosts: then it runs again
 *   with those hosts open;
 * - running outside the sandbox (`outside`) always asks.
 * Without it: today's approvals (the allow list runs unasked, the rest asks), outside.
 */
import * as l10n from '@vscode/l10n';
import type { CommandPolicy } from '../../tools/commandPolicy';
import type { PathGuard, ResolvedPath } from '../../tools/pathGuard';
import type { CommandPlacement } from '../../common/conversation';
import type { ToolResult } from '../../tools/workspaceTools';
import { describeOutcome, type CommandOutcome } from './output';
import { hostAllowed } from './sandbox/hostProxy';
import { decideCommandCall, type Consent } from './toolPolicy';

/** What the sandbox is here, for this call. */
export interface SandboxState {
  /** On in the settings and working on this machine. */
  on: boolean;
  /** `modelGateway.agent.sandbox.runUnasked`: a line not denied runs inside without a question. */
  runUnasked: boolean;
  /** `modelGateway.agent.sandbox.allowedHosts`: open to every sandboxed command. */
  allowedHosts: readonly string[];
}

export interface CommandQuestion {
  line: string;
  folder: ResolvedPath;
  reason: string;
  /** The line "Always allow" would add to the allow list (a command that runs outside). */
  always?: string;
  /** The hosts it asks the network for. */
  network?: string[];
  /** Where it will run once allowed. */
  sandboxed: boolean;
}

export interface SandboxedOutcome extends CommandOutcome {
  refusedHosts: string[];
  /** Repositories (`.git`) it made, which the sandbox removed after it. */
  removedRepositories?: string[];
}

/** How a surface runs a line and asks its person. */
export interface CommandRunners {
  inSandbox(line: string, folder: ResolvedPath, hosts: readonly string[], signal?: AbortSignal): Promise<SandboxedOutcome>;
  outside(line: string, folder: ResolvedPath, signal?: AbortSignal): Promise<CommandOutcome>;
  ask(q: CommandQuestion, signal?: AbortSignal): Promise<{ accepted: boolean; always?: boolean }>;
  /** The person chose "Always allow" for a line. */
  allow?(line: string): Promise<void>;
  /** Where the folder is called in the result ("the workspace root", "the worktree (x)"). */
  where(folder: ResolvedPath): string;
  timeoutSeconds: number;
  log?(line: string): void;
}

export interface CommandCallResult extends ToolResult {
  placement?: CommandPlacement;
}

/** The arguments beyond `command` and `cwd` the sandbox adds to run_command. */
function sandboxArgs(rawArgs: string): { outside: boolean; network: string[] } {
  try {
    const a = JSON.parse(rawArgs || '{}') as { outside?: unknown; network?: unknown };
    const network = Array.isArray(a.network)
      ? a.network.filter((h): h is string => typeof h === 'string' && /^[\w.*-]{1,253}$/.test(h.trim())).map((h) => h.trim())
      : [];
    return { outside: a.outside === true, network: [...new Set(network)].slice(0, 10) };
  } catch {
    return { outside: false, network: [] };
  }
}

export async function runCommandCall(
  rawArgs: string,
  guard: PathGuard,
  policy: CommandPolicy,
  consent: Consent,
  sandbox: SandboxState,
  runners: CommandRunners,
  signal?: AbortSignal,
): Promise<CommandCallResult> {
  const verdict = await decideCommandCall(rawArgs, guard, policy, consent);
  if (verdict.kind === 'invalid') return { content: `Error: ${verdict.message}`, isError: true };
  if (verdict.kind === 'refuse') {
    runners.log?.(`agent: refused to run a command (${verdict.reason})`);
    return {
      content: `Refused, not run: ${verdict.reason} (modelGateway.agent.deniedCommands). Do not try to get around this; tell the person what you wanted to run and why.`,
      isError: true,
    };
  }
  const { line, folder } = verdict;
  const wanted = sandboxArgs(rawArgs);
  const rejected = (what: string): CommandCallResult => ({ content: `The person rejected ${what}; it was not run.`, isError: true });
  const report = (o: CommandOutcome & { removedRepositories?: string[] }, placement: CommandPlacement, extra = ''): CommandCallResult => ({
    content: `${describeOutcome(line, runners.where(folder), o, runners.timeoutSeconds)}${extra}${
      o.removedRepositories?.length
        ? `\n(The sandbox removed the repositories it made: ${o.removedRepositories.join(', ')}. A repository made in the workspace would run its own commands outside the sandbox when VS Code's git opens it.)`
        : ''
    }`,
    isError: o.ended !== undefined || (o.exitCode ?? 0) !== 0,
    placement,
  });

  if (!sandbox.on || wanted.outside) {
    const ask =
      sandbox.on && wanted.outside ? { reason: l10n.t('it asks to run outside the sandbox, with your account’s full access'), always: undefined } : verdict.ask;
    if (ask) {
      const answer = await runners.ask({ line, folder, reason: ask.reason, ...(ask.always ? { always: ask.always } : {}), sandboxed: false }, signal);
      if (!answer.accepted) return rejected(`running \`${line}\``);
      if (answer.always && ask.always) await runners.allow?.(ask.always);
    }
    runners.log?.(`agent: running a command outside the sandbox in ${folder.display}`);
    const o = await runners.outside(line, folder, signal);
    const placement: CommandPlacement = {
      sandboxed: false,
      label: ask
        ? l10n.t('ran outside the sandbox, approved')
        : sandbox.on
          ? l10n.t('ran outside the sandbox')
          : l10n.t('ran without a sandbox (allowed by your list)'),
    };
    return report(o, placement);
  }

  // In the sandbox. The hosts it asks for up front that the person has not opened to every command.
  const newHosts = wanted.network.filter((h) => !hostAllowed(h, sandbox.allowedHosts));
  const unasked = !consent.paused && consent.auto.terminal && (verdict.ask === undefined || sandbox.runUnasked);
  let approvedHosts: string[] = [];
  if (!unasked || newHosts.length > 0) {
    const reason = newHosts.length ? l10n.t('it wants the network: {0}', newHosts.join(', ')) : (verdict.ask?.reason ?? l10n.t('auto-approval is paused'));
    const answer = await runners.ask({ line, folder, reason, ...(newHosts.length ? { network: newHosts } : {}), sandboxed: true }, signal);
    if (!answer.accepted) return rejected(newHosts.length ? `opening the network to ${newHosts.join(', ')} for \`${line}\`` : `running \`${line}\``);
    approvedHosts = newHosts;
  }
  runners.log?.(`agent: running a command in the sandbox in ${folder.display}`);
  const first = await runners.inSandbox(line, folder, [...sandbox.allowedHosts, ...approvedHosts], signal);
  const placement = (hosts: string[]): CommandPlacement => ({
    sandboxed: true,
    label: hosts.length ? l10n.t('ran in the sandbox, with the network to {0}', hosts.join(', ')) : l10n.t('ran in the sandbox'),
    ...(hosts.length ? { hosts } : {}),
  });
  const refused = first.refusedHosts.filter((h) => !approvedHosts.includes(h));
  const failed = first.ended === undefined && (first.exitCode ?? 0) !== 0;
  if (!failed || refused.length === 0 || signal?.aborted) {
    const note = refused.length ? `\n(The sandbox's network refused ${refused.join(', ')}.)` : '';
    return report(first, placement(approvedHosts), note);
  }
  // It failed wanting hosts the sandbox keeps closed: ask once for exactly those, then run again.
  const answer = await runners.ask(
    { line, folder, reason: l10n.t('it failed in the sandbox and wants the network: {0}', refused.join(', ')), network: refused, sandboxed: true },
    signal,
  );
  if (!answer.accepted)
    return report(
      first,
      placement(approvedHosts),
      `\n(It failed in the sandbox, which keeps the network closed to ${refused.join(', ')}; the person did not open it. Do not try to get around this.)`,
    );
  const hosts = [...approvedHosts, ...refused];
  runners.log?.(`agent: running the command again in the sandbox with the network to ${hosts.join(', ')}`);
  const second = await runners.inSandbox(line, folder, [...sandbox.allowedHosts, ...hosts], signal);
  return report(second, placement(hosts), `\n(Run again after the person opened the network to ${refused.join(', ')}; the first run failed without it.)`);
}
