import { join } from 'node:path';
import * as vscode from 'vscode';
import { formatCount } from '../../common/locale';
import { formatCost } from '../../common/money';
import { fileVerdict, workspaceGuard } from '../../shell/workspaceGuard';
import type { PathGuard } from '../../tools/pathGuard';
import type { FeatureSpend } from '../../runtime/host/featureSpend';
import type { Verdict } from '../core/changes';
import { fromOwnUi } from '../core/caller';

/**
 * The chat's verdict on a changed file (`fileVerdict`: the secret list with
 * `modelGateway.chat.secretFiles`, `.gitignore`, `files.exclude`/`search.exclude`), for files that
 * may be gone from the disk too (a deletion, a rename's old side): judged by their name and place.
 */
export function changeVerdict(root: string): Verdict {
  return (path) => fileVerdict(vscode.Uri.file(join(root, path)), () => missingAllowed(workspaceGuard()));
}

/** The same guard, resolving a path that no longer exists instead of refusing it. */
function missingAllowed(guard: PathGuard): PathGuard {
  const resolve: PathGuard['resolve'] = (path, options) => guard.resolve(path, { ...options, allowMissing: true });
  return Object.assign(Object.create(guard) as PathGuard, { resolve });
}

/** Whether a command's arguments are what VS Code's own Source Control view or palette passes. */
export function calledFromOwnUi(args: readonly unknown[]): boolean {
  return fromOwnUi(args, (v) => v instanceof vscode.Uri);
}

/**
 * Asks before a request is sent (a modal only the person answers): `caller` when someone other
 * than the person started it, `large` when the diff is large. Shows the model and what it costs.
 */
export async function confirmSpend(
  spend: FeatureSpend,
  ask: 'caller' | 'large',
  o: { model: string; tokens: number; outputTokens: number; review?: string },
): Promise<boolean> {
  const estimate = await spend.estimate(o.model, o.tokens, o.outputTokens);
  const cost = estimate === undefined ? vscode.l10n.t('price unknown') : vscode.l10n.t('about {0}', formatCost(estimate));
  const tokens = formatCount(o.tokens);
  const message =
    ask === 'large'
      ? vscode.l10n.t('This change is large: the review sends about {0} tokens to {1} ({2}).', tokens, o.model, cost)
      : o.review === undefined
        ? vscode.l10n.t(
            'Another extension asked for a commit message (not the Source Control view): about {0} tokens of your changes go to {1} ({2}).',
            tokens,
            o.model,
            cost,
          )
        : vscode.l10n.t(
            'Another extension asked for a review of {0} (not the Source Control view): about {1} tokens of your changes go to {2} ({3}).',
            o.review,
            tokens,
            o.model,
            cost,
          );
  const go = ask === 'large' ? vscode.l10n.t('Review') : vscode.l10n.t('Send');
  return (await vscode.window.showWarningMessage(message, { modal: true }, go)) === go;
}
