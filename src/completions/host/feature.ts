import * as vscode from 'vscode';
import type { SearchService } from '../../search/host/searchService';
import type { FeatureHost } from '../../shell/featureHost';
import { setDefaultModel } from '../../shell/config';
import { showGatewayError } from '../../shell/errors';
import { fileVerdict } from '../../shell/workspaceGuard';
import { CompositionWatch } from '../core/composition';
import { identifiersNear, RecentEdits, withinBudget } from '../core/recentEdits';
import { ACCEPTED_COMMAND, GatewayInlineCompletions, type SnippetSource } from './provider';
import { readCompletionSettings } from './settings';
import { CompletionsStatusItem, describePath } from './statusItem';
import { FeatureSpend } from '../../runtime/host/featureSpend';
import { ACCEPT_OR_JUMP_COMMAND, DISMISS_COMMAND, NextEditSuggestions, TRIGGER_COMMAND } from './nextEdits';

/** The Usage view's series for next-edit suggestions (carved out of their model's spend). */
export const NEXT_EDIT_SERIES = 'Next-edit suggestions';

/** Where ghost text is offered: files, new files and notebook cells (not settings, output or other virtual documents). */
const SELECTOR: vscode.DocumentSelector = [{ scheme: 'file' }, { scheme: 'untitled' }, { scheme: 'vscode-notebook-cell' }];
const SNOOZE_MS = 15 * 60_000;
/** Tokens of context from other files, recent edits first. */
const SNIPPET_TOKENS = 400;
/** Models whose names say they are made for code completion: listed first when choosing. */
const CODE_MODEL = /cod(e|er|estral)|starcoder|fim|instruct/i;

export interface CompletionsFeature {
  provider: GatewayInlineCompletions;
  status: CompletionsStatusItem;
  recent: RecentEdits;
  nextEdits: NextEditSuggestions;
  nextEditSpend: FeatureSpend;
}

export function activateCompletions(host: FeatureHost, search: SearchService): CompletionsFeature {
  const { services, context } = host;
  const recent = new RecentEdits();
  // The guard's verdict per file, asked on every keystroke: kept until the rules or folders change.
  const verdicts = new Map<string, Promise<'secret' | 'excluded' | undefined>>();
  const withheld = (uri: vscode.Uri) => {
    const key = uri.toString();
    let verdict = verdicts.get(key);
    if (!verdict) verdicts.set(key, (verdict = fileVerdict(uri)));
    return verdict;
  };
  host.own(vscode.workspace.onDidChangeWorkspaceFolders(() => verdicts.clear()));
  const ignoreFiles = host.own(vscode.workspace.createFileSystemWatcher('**/.gitignore'));
  for (const event of [ignoreFiles.onDidCreate, ignoreFiles.onDidChange, ignoreFiles.onDidDelete]) host.own(event(() => verdicts.clear()));
  host.own(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('files.exclude') || e.affectsConfiguration('search.exclude') || e.affectsConfiguration('modelGateway.chat')) verdicts.clear();
    }),
  );
  const snippets: SnippetSource = async (document, prefix, budgetMs) => {
    const own = document.uri.toString();
    const edits = recent.snippets(own);
    const found = await Promise.race([
      search.keywordSnippets(identifiersNear(prefix), 2, vscode.workspace.asRelativePath(document.uri)).catch(() => []),
      new Promise<{ path: string; text: string }[]>((resolve) => setTimeout(() => resolve([]), budgetMs)),
    ]);
    return withinBudget([...edits, ...found], SNIPPET_TOKENS);
  };
  const composition = new CompositionWatch();
  const provider = host.own(
    new GatewayInlineCompletions(services, context.globalState, readCompletionSettings, withheld, snippets, (d) =>
      composition.composing(d.uri.toString(), d.version),
    ),
  );
  const status = host.own(new CompletionsStatusItem(services, provider, readCompletionSettings));
  host.own(vscode.languages.registerInlineCompletionItemProvider(SELECTOR, provider));
  const nextEditSpend = new FeatureSpend(NEXT_EDIT_SERIES, 'modelGateway.nextEdits.ledger', context.globalState, services);
  const nextEdits = host.own(new NextEditSuggestions(services, context.extensionUri, nextEditSpend, withheld, () => provider.today().dollars));
  host.command(ACCEPT_OR_JUMP_COMMAND, () => nextEdits.acceptOrJump());
  host.command(DISMISS_COMMAND, () => nextEdits.dismiss());
  host.command(TRIGGER_COMMAND, () => nextEdits.trigger());

  // Recent edits in files that may be sent (never a secret or excluded file's lines).
  host.own(
    vscode.workspace.onDidChangeTextDocument(async (e) => {
      if (e.contentChanges.length) composition.record(e.document.uri.toString(), e.document.version, e.contentChanges);
      const change = e.contentChanges[0];
      if (!change || (e.document.uri.scheme !== 'file' && e.document.uri.scheme !== 'untitled')) return;
      if (await withheld(e.document.uri)) return;
      const doc = e.document;
      recent.record(doc.uri.toString(), vscode.workspace.asRelativePath(doc.uri), change.range.start.line, {
        lineCount: doc.lineCount,
        lineAt: (n) => doc.lineAt(n).text,
      });
    }),
  );
  host.own(
    vscode.workspace.onDidCloseTextDocument((d) => {
      recent.forget(d.uri.toString());
      verdicts.delete(d.uri.toString());
      composition.forget(d.uri.toString());
    }),
  );
  host.own(
    services.onDidChangeConnection(() => {
      provider.cache.clear();
      status.render();
    }),
  );
  host.own(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('modelGateway.defaultModels.completion') || e.affectsConfiguration('modelGateway.modelOverrides')) provider.cache.clear();
    }),
  );

  const configuration = () => vscode.workspace.getConfiguration('modelGateway');
  const toggle = async () => {
    const on = readCompletionSettings().enabled;
    await configuration().update('completions.enabled', !on, vscode.ConfigurationTarget.Global);
    if (!on) provider.snooze(0);
    // A workspace that turned them off keeps them off: say what is in force.
    return readCompletionSettings().enabled;
  };
  const chooseModel = async (): Promise<string | undefined> => {
    let ids: string[];
    try {
      ids = (await services.client().models.list()).map((m) => m.id);
    } catch (err) {
      showGatewayError(services, vscode.l10n.t('Could not list the models'), err);
      return undefined;
    }
    const current = readCompletionSettings().model;
    const items = [...ids.filter((id) => CODE_MODEL.test(id)).sort(), ...ids.filter((id) => !CODE_MODEL.test(id)).sort()].map((id) => ({
      label: id,
      description: id === current ? vscode.l10n.t('in use') : CODE_MODEL.test(id) ? vscode.l10n.t('code model') : undefined,
    }));
    const pick = await vscode.window.showQuickPick(items, {
      title: vscode.l10n.t('Model for inline completions'),
      placeHolder: vscode.l10n.t('A code model with fill-in-the-middle is fastest and cheapest'),
      ignoreFocusOut: true,
    });
    if (!pick) return undefined;
    await useForCompletions(pick.label);
    return pick.label;
  };
  const useForCompletions = async (model: string) => {
    await setDefaultModel('completion', model);
    if (!readCompletionSettings().enabled) await configuration().update('completions.enabled', true, vscode.ConfigurationTarget.Global);
    provider.snooze(0);
    void vscode.window.showInformationMessage(vscode.l10n.t('Inline completions now use {0}.', model));
  };

  host.command('modelGateway.completions.toggle', toggle);
  host.command('modelGateway.completions.snooze', (minutes?: unknown) => provider.snooze(typeof minutes === 'number' ? minutes * 60_000 : SNOOZE_MS));
  host.command('modelGateway.completions.chooseModel', chooseModel);
  host.command('modelGateway.models.useForCompletions', async (arg?: unknown) => {
    const node = arg as { kind?: string; id?: string } | string | undefined;
    const model = typeof node === 'string' ? node : node?.kind === 'model' ? node.id : undefined;
    if (model) await useForCompletions(model);
    else await chooseModel();
  });
  host.command(ACCEPTED_COMMAND, (chars?: unknown) => provider.recordAccepted(typeof chars === 'number' ? chars : 0));
  host.command('modelGateway.completions.menu', async () => {
    const s = readCompletionSettings();
    const snoozed = !!provider.snoozedUntil;
    const items: (vscode.QuickPickItem & { run: () => unknown })[] = [
      { label: s.enabled ? vscode.l10n.t('$(circle-slash) Turn Off') : vscode.l10n.t('$(sparkle) Turn On'), run: toggle },
      ...(s.enabled && s.model
        ? [
            snoozed
              ? { label: vscode.l10n.t('$(play) Resume Now'), run: () => provider.snooze(0) }
              : { label: vscode.l10n.t('$(clock) Snooze for 15 Minutes'), run: () => provider.snooze(SNOOZE_MS) },
          ]
        : []),
      {
        label: vscode.l10n.t('$(symbol-method) Choose Model…'),
        description: s.model ? `${s.model} · ${describePath(provider.pathOf(s.model, s))}` : vscode.l10n.t('none yet'),
        run: chooseModel,
      },
      {
        label: vscode.l10n.t('$(gear) Languages and Limits…'),
        run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'modelGateway.completions'),
      },
      { label: vscode.l10n.t('$(graph) Open Usage'), run: () => vscode.commands.executeCommand('modelGateway.usage.open') },
    ];
    const pick = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Model Gateway: inline completions') });
    await pick?.run();
  });
  return { provider, status, recent, nextEdits, nextEditSpend };
}
