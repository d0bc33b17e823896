/**
 * Settings that decide where requests (and so the credentials) go. They are user settings
 * (`"scope": "application"` in package.json, which VS Code does not take from a workspace), and
 * are read from the user's value only, so no folder's `.vscode/settings.json` or workspace file
 * can name another gateway, whatever the VS Code version does with scopes.
 */
export const USER_ONLY_SETTINGS = ['baseUrl', 'extraHeaders', 'userId'] as const;

/** `modelGateway.<key>` values a settings file holds, in the flat (`"a.b": 1`) or nested (`"a": {"b": 1}`) form. */
export function userOnlySettingsIn(text: string): Record<string, unknown> {
  const tree = parseJsonc(text);
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

/**
 * JSON with comments and trailing commas, as VS Code's settings files are written; undefined when
 * it does not parse. (jsonc-parser would add 10 KB to the activation bundle for this one call.)
 */
export function parseJsonc(text: string): unknown {
  let out = '';
  /** Commas outside strings, by their place in `out`: a trailing one is dropped below. */
  const commas: number[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      // A string, escapes included, copied whole: `//` inside it is not a comment.
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 2;
    } else {
      if (c === ',') commas.push(out.length);
      out += c;
      i++;
    }
  }
  const closes = /\s*[}\]]/y;
  for (const at of commas.reverse()) {
    closes.lastIndex = at + 1;
    if (closes.test(out)) out = out.slice(0, at) + out.slice(at + 1);
  }
  try {
    return JSON.parse(out) as unknown;
  } catch {
    return undefined;
  }
}
