import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { agentSettings, consentNow, sessionCostLimit } from '../../runtime/host/agentSettings';
import { costOfParts, CostMeter } from '../../runtime/host/cost';
import { modelProfile } from '../../runtime/host/modelProfile';
import { runModelTurn } from '../../runtime/host/modelTurn';
import { instructionsFor, type Instructions } from '../../runtime/host/instructions';
import { ProjectRules } from '../../runtime/host/projectRules';
import { runInSandbox, sandboxState } from '../../runtime/host/commandSandbox';
import { MemoryFiles } from '../../runtime/core/memory';
import { workspaceGuard } from '../../shell/workspaceGuard';
import { systemPrompt } from '../../runtime/core/prompt';
import { emptyUsage, newId, titleFrom, usageParts, type AssistantTurn, type UserTurn } from '../../common/conversation';
import { chatSettings, workspaceExcludeGlobs } from '../../shell/config';
import { counted } from '../../shell/listeners';
import { redact } from '../../shell/redact';
import type { PricedFeature } from '../../shell/services';
import {
  addWorktree,
  changedFiles,
  commitAll,
  currentBranch,
  fileAt,
  headCommit,
  lineStats,
  locateRepository,
  mergeBranch,
  removeWorktree,
  worktreePlace,
  type GitPlace,
} from '../core/git';
import { SessionStore, type AgentSession } from '../core/sessionStore';
import { worktreeTools, type WorktreeQuestion } from '../core/worktreeTools';
import type { ProposedEdit } from '../../tools/workspaceTools';

/** The scheme of a file as it was at a session's base (the left side of Review). */
const BASE_SCHEME = 'model-gateway-session-base';
/** The scheme of an edit a session asks about (the right side of Show Change). */
const PROPOSAL_SCHEME = 'model-gateway-session-proposal';

const ACTIVE = new Set<AgentSession['status']>(['starting', 'running', 'waiting']);

/** What the system prompt says of a background session. */
function backgroundMode(branch: string): string {
  return [
    `Mode: background. You work alone in a git worktree on the branch ${branch}, a copy of the person's project; they are not watching and will review your changes before they are merged.`,
    'Carry the task out to the end with the tools (edits are written to the worktree; commands may wait for the person). Then answer with a short summary: what you changed, in which files, and what to check.',
  ].join('\n');
}

/**
 * Background agent sessions: each in its own git worktree on a new branch, running without the
 * chat (the person uses the window meanwhile), listed in the Agent Sessions view with its status,
 * branch, files, tokens and cost, and the question it waits on. Review shows the worktree's diff
 * against its base; Apply merges its branch into the person's; Discard removes both.
 */
export class AgentSessions implements vscode.TreeDataProvider<AgentSession>, vscode.TextDocumentContentProvider, vscode.Disposable {
  private sessions: AgentSession[] = [];
  private readonly store: SessionStore;
  private readonly worktrees: string;
  private readonly running = new Map<string, AbortController>();
  /** Questions waiting for the person, by session. */
  private readonly questions = new Map<string, { text: string; answer: (yes: boolean) => void; actions: [string, string]; edit?: ProposedEdit }>();
  /** The proposed text of the edit a session asks about (the right side of its Show Change), by session. */
  private readonly proposals = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<AgentSession | undefined>();
  readonly onDidChangeTreeData = counted('agentSessions.onDidChangeTreeData', this.changed.event);
  private readonly disposables: vscode.Disposable[] = [];
  private saving: Promise<void> = Promise.resolve();
  /** The project's rules files (read for each turn, as in the chat). */
  private readonly rules = new ProjectRules(() => workspaceGuard());
  private readonly memory: MemoryFiles;
  private loaded: Promise<void>;

  constructor(
    private readonly services: PricedFeature,
    private readonly context: vscode.ExtensionContext,
  ) {
    const base = (context.storageUri ?? context.globalStorageUri).fsPath;
    this.store = new SessionStore(join(base, 'agent-sessions.json'));
    this.worktrees = join(base, 'worktrees');
    this.memory = new MemoryFiles(context.globalStorageUri.fsPath, () => workspaceGuard());
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(BASE_SCHEME, this),
      vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, { provideTextDocumentContent: (uri) => this.proposals.get(uri.query) ?? '' }),
      this.changed,
    );
    this.loaded = this.store.load().then((s) => {
      this.sessions = s;
      this.changed.fire(undefined);
    });
  }

  /** Every session, newest first (after the stored ones are read). */
  async list(): Promise<AgentSession[]> {
    await this.loaded;
    return [...this.sessions].sort((a, b) => b.createdAt - a.createdAt);
  }

  /** Whether `arg` is one of the view's own rows (the object itself, which no other extension holds). */
  isOwnRow(arg: unknown): boolean {
    return this.sessions.includes(arg as AgentSession);
  }

  get(id: string): AgentSession | undefined {
    return this.sessions.find((s) => s.id === id);
  }

  // ---------- the tree ----------

  async getChildren(element?: AgentSession): Promise<AgentSession[]> {
    return element ? [] : (await this.list()).filter((s) => s.status !== 'discarded');
  }

  getTreeItem(s: AgentSession): vscode.TreeItem {
    const item = new vscode.TreeItem(s.title, vscode.TreeItemCollapsibleState.None);
    const tokens = s.usage.input + s.usage.output;
    const cost = s.cost?.dollars !== undefined ? `$${s.cost.dollars.toFixed(4)}` : '';
    item.description = [
      statusWords(s),
      s.branch,
      s.files.length === 1 ? vscode.l10n.t('1 file') : vscode.l10n.t('{0} files', s.files.length),
      tokens ? vscode.l10n.t('{0} tokens', tokens.toLocaleString()) : '',
      cost,
    ]
      .filter(Boolean)
      .join(' · ');
    item.tooltip = new vscode.MarkdownString(
      [
        `**${s.title}**`,
        '',
        vscode.l10n.t('Branch {0} from {1}; worktree {2}', `\`${s.branch}\``, `\`${s.base.slice(0, 8)}\``, `\`${s.worktree}\``),
        s.files.length ? vscode.l10n.t('Changed: {0}', s.files.join(', ')) : vscode.l10n.t('No file changed yet.'),
        vscode.l10n.t('Tokens: {0} in, {1} out{2}', s.usage.input.toLocaleString(), s.usage.output.toLocaleString(), cost ? ` · ${cost}` : ''),
        s.question ? vscode.l10n.t('Waiting for you: {0}', s.question) : '',
        s.error ? vscode.l10n.t('Error: {0}', s.error) : '',
        s.applied?.conflicts?.length ? vscode.l10n.t('Merged with conflicts in {0}: resolve them in Source Control.', s.applied.conflicts.join(', ')) : '',
      ]
        .filter(Boolean)
        .join('\n\n'),
    );
    item.iconPath = new vscode.ThemeIcon(
      s.status === 'running' || s.status === 'starting'
        ? 'loading~spin'
        : s.status === 'waiting'
          ? 'question'
          : s.status === 'done'
            ? 'pass'
            : s.status === 'applied'
              ? 'git-merge'
              : s.status === 'error'
                ? 'error'
                : 'debug-stop',
    );
    item.contextValue = `agentSession.${s.status}`;
    item.id = s.id;
    item.command =
      s.status === 'waiting'
        ? { command: 'modelGateway.agentSessions.answer', title: vscode.l10n.t('Answer'), arguments: [s] }
        : { command: 'modelGateway.agentSessions.open', title: vscode.l10n.t('Open'), arguments: [s] };
    return item;
  }

  /** A file as it was at a session's base: `path` is the repository-relative path, `query` the session id. */
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const s = this.get(uri.query);
    if (!s) return '';
    return (await fileAt(await this.worktreeOf(s), s.base, uri.path.replace(/^\//, ''))) ?? '';
  }

  // ---------- starting and running ----------

  /** Start in Background: a worktree on a new branch, and the conversation running there. */
  async start(prompt: string): Promise<AgentSession | undefined> {
    await this.loaded;
    if (!vscode.workspace.isTrusted) throw new Error(vscode.l10n.t('Background agents run only in a trusted workspace.'));
    if (!this.services.isConfigured()) throw new Error(vscode.l10n.t('Set the gateway URL and API key first (Model Gateway: Set API Key).'));
    const folder = (vscode.workspace.workspaceFolders ?? []).find((f) => f.uri.scheme === 'file');
    const repo = folder ? await locateRepository(folder.uri.fsPath) : undefined;
    if (!repo) throw new Error(vscode.l10n.t('A background agent works in a git worktree: open a folder that is a git repository (with git installed).'));
    const model = this.context.workspaceState.get<string>('modelGateway.chat.model') || this.services.settings().defaultModels.chat;
    if (!model) throw new Error(vscode.l10n.t('No chat model is chosen: pick one in the chat or set modelGateway.defaultModels.chat.'));
    const id = newId('s');
    const slug =
      prompt
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, '')
        .slice(0, 30) || 'task';
    const branch = `model-gateway/${slug}-${randomBytes(3).toString('hex')}`;
    const now = Date.now();
    const session: AgentSession = {
      id,
      title: titleFrom(prompt),
      prompt,
      model,
      repo: repo.workTree,
      repoGitDir: repo.gitDir,
      worktree: join(this.worktrees, id),
      branch,
      base: await headCommit(repo),
      baseBranch: await currentBranch(repo),
      status: 'starting',
      createdAt: now,
      updatedAt: now,
      turns: [],
      usage: emptyUsage(),
      files: [],
    };
    session.gitDir = (await addWorktree(repo, session.worktree, branch, session.base)).gitDir;
    this.sessions.push(session);
    await this.save(session);
    this.services.log.info(`agent sessions: started "${session.title}" on ${branch} (${model})`);
    void this.run(session, prompt);
    return session;
  }

  /** Runs one turn of a session in its worktree (the first, or a resumption). */
  private async run(session: AgentSession, text: string): Promise<void> {
    if (this.running.has(session.id)) return;
    const abort = new AbortController();
    this.running.set(session.id, abort);
    const settings = chatSettings();
    const profile = modelProfile(this.services, session.model, { purpose: 'agent sessions' });
    const now = Date.now();
    const question: UserTurn = { id: newId('u'), role: 'user', text, images: [], context: [], at: now };
    const turn: AssistantTurn = {
      id: newId('a'),
      role: 'assistant',
      model: session.model,
      format: profile.options.format,
      steps: [],
      status: 'streaming',
      usage: emptyUsage(),
      at: now,
    };
    session.turns.push(question, turn);
    session.status = 'running';
    delete session.error;
    let lastSave = 0;
    // The session's own limit, over all its turns: what earlier turns cost counts.
    const limit = sessionCostLimit();
    const meter = new CostMeter(this.services, turn, settings.cacheTtl, session.cost?.dollars ?? 0);
    let stoppedBy: string | undefined;
    try {
      const tools = worktreeTools({
        worktree: session.worktree,
        name: session.branch,
        excludes: [...workspaceExcludeGlobs(), ...settings.extraExcludes],
        secretFiles: settings.secretFiles,
        consent: () => consentNow(this.context.globalState),
        policy: () => agentSettings().policy,
        timeoutSeconds: () => agentSettings().timeoutSeconds,
        sandbox: sandboxState,
        inSandbox: runInSandbox,
        ask: (q, signal) =>
          this.ask(
            session,
            questionText(q),
            q.kind === 'command' ? [vscode.l10n.t('Run'), vscode.l10n.t('Reject')] : [vscode.l10n.t('Accept'), vscode.l10n.t('Reject')],
            signal,
            q.kind === 'edit' ? q.edit : undefined,
          ),
      });
      await runModelTurn(this.services, {
        surface: 'agent sessions',
        model: session.model,
        format: profile.options.format,
        system: systemPrompt({
          folders: [session.branch],
          toolsEnabled: true,
          rules: (await this.instructions()).section,
          mode: backgroundMode(session.branch),
        }),
        history: session.turns.slice(0, -1),
        turn,
        tools,
        maxSteps: settings.maxSteps,
        costLimit: { dollars: limit, meter },
        // Nobody watches a background session: a limit stops it, and the view says which.
        onLimit: (reached) => {
          stoppedBy =
            reached.kind === 'cost'
              ? vscode.l10n.t(
                  'It reached its cost limit of ${0} (it has cost ${1}; modelGateway.agent.maxCostPerSessionDollars).',
                  limit.toFixed(2),
                  reached.dollars.toFixed(2),
                )
              : vscode.l10n.t('It reached its limit of {0} requests (modelGateway.chat.maxToolSteps).', settings.maxSteps);
          return Promise.resolve(false);
        },
        signal: abort.signal,
        onEvent: (e) => {
          if (e.type !== 'step' && e.type !== 'tool-update') return;
          // Saved at each step (a reload finds it there), at most every second.
          if (Date.now() - lastSave < 1000) return;
          lastSave = Date.now();
          void this.save(session);
        },
      });
    } catch (err) {
      turn.status = 'error';
      turn.error = { message: err instanceof Error ? err.message : String(err), kind: err instanceof Error ? err.name : 'Error' };
    } finally {
      this.running.delete(session.id);
      this.questions.delete(session.id);
      delete session.question;
    }
    if (turn.status === 'streaming') turn.status = 'stopped';
    const parts = usageParts(turn);
    // Once a fallback answered, each model's share is kept (the earlier turns' all the session's model's).
    if (session.usageBy || parts.length > 1 || parts[0][0] !== session.model) {
      const by = (session.usageBy ??= { [session.model]: { ...session.usage } });
      for (const [model, u] of parts) {
        const mine = (by[model] ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
        for (const k of ['input', 'output', 'cacheRead', 'cacheWrite'] as const) mine[k] += u[k];
      }
    }
    for (const k of ['input', 'output', 'cacheRead', 'cacheWrite'] as const) session.usage[k] += turn.usage[k];
    session.cost = (await costOfParts(this.services, usageParts(session), chatSettings().cacheTtl)) ?? session.cost;
    try {
      const worktree = await this.worktreeOf(session);
      await commitAll(worktree, `Model Gateway agent: ${session.title}`);
      session.files = (await changedFiles(worktree, session.base)).map((f) => f.path);
    } catch (err) {
      this.services.log.warn(`agent sessions: the worktree of "${session.title}" could not be committed (${err instanceof Error ? err.message : String(err)})`);
    }
    session.status = turn.status === 'done' && !stoppedBy ? 'done' : turn.status === 'error' ? 'error' : 'stopped';
    if (turn.error) session.error = redact(turn.error.message);
    else if (stoppedBy) session.error = stoppedBy;
    await this.save(session);
    this.services.log.info(`agent sessions: "${session.title}" ended ${session.status}, ${session.files.length} file(s) changed`);
    if (turn.usage.output > 0) this.services.notifySpend();
    void this.tellEnded(session);
  }

  private async tellEnded(s: AgentSession): Promise<void> {
    if (s.status === 'stopped') return;
    const review = vscode.l10n.t('Review');
    const apply = vscode.l10n.t('Apply');
    const pick =
      s.status === 'done'
        ? await vscode.window.showInformationMessage(
            s.files.length === 1
              ? vscode.l10n.t('Background agent “{0}” finished: 1 file changed on {1}.', s.title, s.branch)
              : vscode.l10n.t('Background agent “{0}” finished: {1} files changed on {2}.', s.title, s.files.length, s.branch),
            ...(s.files.length ? [review, apply] : []),
          )
        : await vscode.window.showErrorMessage(vscode.l10n.t('Background agent “{0}” failed: {1}', s.title, s.error ?? ''));
    if (pick === review) await this.review(s);
    else if (pick === apply) await this.apply(s);
  }

  /**
   * A question of a running session: it waits (shown in the view) until the person answers, from
   * the notification or later from the view; closing the notification does not answer it.
   */
  private ask(session: AgentSession, text: string, actions: [string, string], signal?: AbortSignal, edit?: ProposedEdit): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const done = (yes: boolean) => {
        if (!this.questions.has(session.id)) return;
        this.questions.delete(session.id);
        delete session.question;
        session.status = 'running';
        void this.save(session);
        resolve(yes);
      };
      if (signal?.aborted) return resolve(false);
      signal?.addEventListener('abort', () => done(false), { once: true });
      this.questions.set(session.id, { text, answer: done, actions, edit });
      session.question = text;
      session.status = 'waiting';
      void this.save(session);
      void this.showQuestion(session);
    });
  }

  /** The question of a waiting session, as a notification (again from the view's Answer). */
  async showQuestion(session: AgentSession): Promise<void> {
    const q = this.questions.get(session.id);
    if (!q) return;
    const show = vscode.l10n.t('Show Change');
    const pick = await vscode.window.showInformationMessage(
      vscode.l10n.t('Background agent “{0}”: {1}', session.title, q.text),
      ...q.actions,
      ...(q.edit ? [show] : []),
    );
    if (pick === q.actions[0]) q.answer(true);
    else if (pick === q.actions[1]) q.answer(false);
    else if (pick === show && q.edit) {
      // The diff of what it would write, then the question again.
      this.proposals.set(session.id, q.edit.after);
      const before =
        q.edit.kind === 'create' ? vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${q.edit.path.rel}`, query: '' }) : vscode.Uri.file(q.edit.path.abs);
      const after = vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${q.edit.path.rel}`, query: session.id });
      await vscode.commands.executeCommand('vscode.diff', before, after, vscode.l10n.t('{0}: its proposed change ({1})', session.title, q.edit.path.display), {
        preview: true,
      });
      await this.showQuestion(session);
    }
  }

  // ---------- the person's actions ----------

  stop(s: AgentSession): void {
    this.running.get(s.id)?.abort();
  }

  /** Resume a stopped session (a reload stopped it, or the person did): it goes on in its worktree. */
  async resume(s: AgentSession): Promise<void> {
    if (this.running.has(s.id) || !['stopped', 'error', 'done'].includes(s.status)) return;
    await this.run(
      s,
      s.status === 'done'
        ? s.prompt
        : `Continue the task where you left off (the session was stopped; what is done is in the worktree, check it first). The task: ${s.prompt}`,
    );
  }

  /** Review: the worktree's changes against its base, in one multi-file diff. */
  async review(s: AgentSession): Promise<void> {
    const files = await changedFiles(await this.worktreeOf(s), s.base);
    s.files = files.map((f) => f.path);
    void this.save(s);
    if (files.length === 0) {
      void vscode.window.showInformationMessage(vscode.l10n.t('“{0}” changed no file yet.', s.title));
      return;
    }
    const resources = files.map((f) => {
      const modified = vscode.Uri.file(join(s.worktree, f.path));
      const original = vscode.Uri.from({ scheme: BASE_SCHEME, path: `/${f.path}`, query: s.id });
      return [modified, f.status === 'A' ? undefined : original, f.status === 'D' ? undefined : modified] as const;
    });
    await vscode.commands.executeCommand(
      'vscode.changes',
      vscode.l10n.t('Agent session “{0}”: {1} against {2}', s.title, s.branch, s.base.slice(0, 8)),
      resources,
    );
  }

  /** Apply: the branch merged into what the person has checked out; conflicts are left to resolve, nothing is lost. */
  async apply(s: AgentSession): Promise<void> {
    if (this.running.has(s.id)) {
      void vscode.window.showWarningMessage(vscode.l10n.t('Stop “{0}” first, or wait for it to end.', s.title));
      return;
    }
    const worktree = await this.worktreeOf(s);
    await commitAll(worktree, `Model Gateway agent: ${s.title}`);
    const stats = await lineStats(worktree, s.base);
    s.files = (await changedFiles(worktree, s.base)).map((f) => f.path);
    // Asked every time: a merge into the person's branch is theirs to start (a command can be run by any extension).
    const merge = vscode.l10n.t('Merge');
    const into = s.baseBranch ?? 'HEAD';
    if (
      (await vscode.window.showInformationMessage(
        vscode.l10n.t('Merge {0} into {1}? {2} files: {3}.', s.branch, into, s.files.length, stats),
        { modal: true, detail: s.files.join('\n') },
        merge,
      )) !== merge
    )
      return;
    const outcome = await mergeBranch(await this.repoOf(s), s.branch, `Merge ${s.branch}: ${s.title}`);
    if (outcome.merged) {
      s.status = 'applied';
      s.applied = { at: Date.now() };
      await this.save(s);
      void vscode.window.showInformationMessage(
        vscode.l10n.t('“{0}” is merged into {1}: {2} files, {3}.', s.title, s.baseBranch ?? 'HEAD', s.files.length, stats),
      );
    } else if ('conflicts' in outcome) {
      s.status = 'applied';
      s.applied = { at: Date.now(), conflicts: outcome.conflicts };
      await this.save(s);
      void vscode.commands.executeCommand('workbench.view.scm');
      void vscode.window.showWarningMessage(
        vscode.l10n.t(
          'Merging “{0}” left conflicts in {1}: resolve them in Source Control (or run git merge --abort to undo the merge). Nothing was lost: the branch {2} is kept.',
          s.title,
          outcome.conflicts.join(', '),
          s.branch,
        ),
      );
    } else {
      void vscode.window.showErrorMessage(vscode.l10n.t('“{0}” could not be merged, and nothing changed: {1}', s.title, outcome.refused));
    }
  }

  /** Discard: the worktree and its branch removed (asked first: its work goes with them). */
  async discard(s: AgentSession, confirmed = false): Promise<boolean> {
    if (!confirmed) {
      const remove = vscode.l10n.t('Discard');
      const what = s.status === 'applied' ? vscode.l10n.t('Its branch is merged already.') : vscode.l10n.t('Its {0} changed files are lost.', s.files.length);
      if (
        (await vscode.window.showWarningMessage(
          vscode.l10n.t('Discard “{0}”? The worktree and the branch {1} are removed. {2}', s.title, s.branch, what),
          { modal: true },
          remove,
        )) !== remove
      )
        return false;
    }
    this.stop(s);
    await removeWorktree(await this.repoOf(s), s.worktree, s.branch);
    s.status = 'discarded';
    this.sessions = this.sessions.filter((x) => x.id !== s.id);
    await this.save(undefined);
    return true;
  }

  /** Its conversation, as a Markdown document. */
  async open(s: AgentSession): Promise<void> {
    const lines = [`# ${s.title}`, '', `*${s.branch} · ${statusWords(s)} · ${s.model}*`, ''];
    for (const t of s.turns) {
      if (t.role === 'user') lines.push(`## ${vscode.l10n.t('Task')}`, '', t.text, '');
      else
        for (const step of t.steps) {
          if (step.text.trim()) lines.push(step.text.trim(), '');
          for (const c of step.toolCalls) lines.push(`- \`${c.name}\` ${c.args.slice(0, 200)} → ${c.status}`);
          if (step.toolCalls.length) lines.push('');
        }
    }
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: lines.join('\n') });
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  /** The project's rules and the memory (the person's, the repository's), as the chat's system prompt carries them. */
  private async instructions(): Promise<Instructions> {
    const memory = await this.memory.entries({
      trusted: vscode.workspace.isTrusted,
      userLabel: vscode.l10n.t('memory (yours)'),
      refused: (reason) => this.services.log.warn(`agent sessions: the repository's memory is not read: ${reason}`),
    });
    return instructionsFor(this.rules, [], memory);
  }

  /** The person's repository, as git is told it (found again for a session kept before its git folder was). */
  private async repoOf(s: AgentSession): Promise<GitPlace> {
    if (s.repoGitDir) return { gitDir: s.repoGitDir, workTree: s.repo };
    // The person's own folder: the agent worked in its worktree, never here.
    const found = await locateRepository(s.repo);
    if (!found) throw new Error(vscode.l10n.t('{0} is no longer a git repository.', s.repo));
    s.repoGitDir = found.gitDir;
    return found;
  }

  /** The session's worktree, as git is told it: its git folder from the repository's records, never from its `.git` file. */
  private async worktreeOf(s: AgentSession): Promise<GitPlace> {
    if (s.gitDir) return { gitDir: s.gitDir, workTree: s.worktree };
    const place = await worktreePlace(await this.repoOf(s), s.worktree);
    s.gitDir = place.gitDir;
    return place;
  }

  /** Saved atomically (one write at a time, in order); the view is told. */
  private save(s: AgentSession | undefined): Promise<void> {
    if (s) s.updatedAt = Date.now();
    const snapshot = structuredClone(this.sessions);
    this.saving = this.saving.then(() => this.store.save(snapshot)).catch((err: unknown) => this.services.log.error('agent sessions: could not save', err));
    this.changed.fire(undefined);
    return this.saving;
  }

  /** Sessions waiting for the person's answer. */
  get waiting(): number {
    return this.sessions.filter((s) => s.status === 'waiting').length;
  }

  /** Sessions running now (the tests wait on them). */
  get active(): number {
    return this.sessions.filter((s) => ACTIVE.has(s.status)).length;
  }

  dispose(): void {
    this.rules.dispose();
    for (const a of this.running.values()) a.abort();
    for (const d of this.disposables) d.dispose();
  }
}

/** What the person is asked: a sensitive edit says why it is, and every edit can be seen before the answer (the notification's Show Change). */
function questionText(q: WorktreeQuestion): string {
  if (q.kind === 'command')
    return q.network?.length
      ? vscode.l10n.t('Run `{0}` in the sandbox with the network to {1}? ({2})', q.line, q.network.join(', '), q.reason)
      : q.sandboxed
        ? vscode.l10n.t('Run `{0}` in the sandbox, in its worktree? ({1})', q.line, q.reason)
        : vscode.l10n.t('Run `{0}` in its worktree? ({1})', q.line, q.reason);
  return q.sensitive
    ? vscode.l10n.t('Write its change to {0} in its worktree? {1}', q.edit.path.display, q.sensitive)
    : vscode.l10n.t('Write its change to {0} in its worktree?', q.edit.path.display);
}

function statusWords(s: AgentSession): string {
  switch (s.status) {
    case 'starting':
      return vscode.l10n.t('starting');
    case 'running':
      return vscode.l10n.t('running');
    case 'waiting':
      return vscode.l10n.t('waiting for you');
    case 'done':
      return vscode.l10n.t('done');
    case 'stopped':
      return vscode.l10n.t('stopped');
    case 'error':
      return vscode.l10n.t('failed');
    case 'applied':
      return s.applied?.conflicts?.length ? vscode.l10n.t('merged, with conflicts') : vscode.l10n.t('merged');
    case 'discarded':
      return vscode.l10n.t('discarded');
  }
}
