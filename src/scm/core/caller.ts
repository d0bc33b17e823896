/**
 * Who called a command that spends: VS Code's own parts (the command palette or a link with no
 * argument, the Source Control title bar, the Source Control box's button) or anyone else
 * (another extension's `executeCommand`). VS Code gives a command no caller's identity, so this
 * reads the arguments: only the exact shapes VS Code itself passes count as ours; anything else
 * is asked about first. (Code running in the same extension host can imitate them; what this
 * stops is an extension spending on the person's account through our command unasked.)
 */

type IsUri = (v: unknown) => boolean;

/** The Source Control view's repository as VS Code passes it to the title bar's commands: its `SourceControl`. */
function isSourceControl(v: unknown, isUri: IsUri): boolean {
  if (!v || typeof v !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(v);
  // VS Code's object has its properties as getters of its class; a literal is someone's imitation.
  if (proto === Object.prototype || proto === null || Object.prototype.hasOwnProperty.call(v, 'rootUri')) return false;
  const s = v as { id?: unknown; rootUri?: unknown; inputBox?: unknown };
  return s.id === 'git' && isUri(s.rootUri) && typeof s.inputBox === 'object' && s.inputBox !== null;
}

/** The Source Control box's button: the repository's root, its groups' files, a cancellation token. */
function isInputBoxCall(args: readonly unknown[], isUri: IsUri): boolean {
  const [root, groups, token, ...rest] = args;
  if (!isUri(root) || !Array.isArray(groups) || rest.some((r) => r !== undefined)) return false;
  const groupOk = (g: unknown) =>
    !!g &&
    typeof g === 'object' &&
    typeof (g as { resourceGroupId?: unknown }).resourceGroupId === 'string' &&
    Array.isArray((g as { resources?: unknown }).resources);
  const tokenOk =
    token === undefined ||
    (!!token && typeof token === 'object' && typeof (token as { isCancellationRequested?: unknown }).isCancellationRequested === 'boolean');
  return groups.every(groupOk) && tokenOk;
}

/** Whether a command's arguments are what VS Code's own UI passes (then the person started it). */
export function fromOwnUi(args: readonly unknown[], isUri: IsUri): boolean {
  const given = args.filter((a) => a !== undefined);
  if (!given.length) return true;
  if (isSourceControl(args[0], isUri) && args.slice(1).every((a) => a === undefined)) return true;
  return isInputBoxCall(args, isUri);
}

/**
 * What to ask before a request is sent: 'caller' when someone other than the person started it
 * (the model and the estimate are shown, nothing goes until they agree), 'large' when the diff is
 * above `largeAbove` tokens, else nothing.
 */
export function askBeforeSending(ownUi: boolean, tokens: number, largeAbove = Infinity): 'caller' | 'large' | undefined {
  if (!ownUi) return 'caller';
  return tokens > largeAbove ? 'large' : undefined;
}
