// The ESM build: the UMD one that `main` names requires its parts at run time, which a bundle cannot follow.
import { parse, type ParseError } from 'jsonc-parser/lib/esm/main.js';

/**
 * Settings that decide where requests (and so the credentials) go. They are user settings
 * (`"scope": "application"` in package.json, which VS Code does not take from a workspace), and
 * are read from the user's value only, so no folder's `.vscode/settings.json` or workspace file
 * can name another gateway, whatever the VS Code version does with scopes.
 */
export const USER_ONLY_SETTINGS = ['baseUrl', 'extraHeaders', 'userId'] as const;

/** `modelGateway.<key>` values a settings file holds, in the flat (`"a.b": 1`) or nested (`"a": {"b": 1}`) form. */
export function userOnlySettingsIn(text: string): Record<string, unknown> {
  const errors: ParseError[] = [];
  const tree = parse(text, errors, { allowTrailingComma: true, disallowComments: false }) as unknown;
  if (!tree || typeof tree !== 'object' || Array.isArray(tree)) return {};
  const root = tree as Record<string, unknown>;
  // A workspace file keeps its settings under "settings".
  const settings = root.settings && typeof root.settings === 'object' && !('modelGateway.baseUrl' in root) ? (root.settings as Record<string, unknown>) : root;
  const nested = settings.modelGateway && typeof settings.modelGateway === 'object' ? (settings.modelGateway as Record<string, unknown>) : {};
  const found: Record<string, unknown> = {};
  for (const key of USER_ONLY_SETTINGS) {
    const value = settings[`modelGateway.${key}`] ?? nested[key];
    if (value !== undefined) found[`modelGateway.${key}`] = value;
  }
  return found;
}
