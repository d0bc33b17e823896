/**
 * Which model commit messages and reviews go to. Only the person's own (user) settings choose it:
 * `modelGateway.scm.model`, else the chat's model as the user set it. A cloned repository's
 * `.vscode/settings.json` can name any model (`defaultModels.chat` may be set per workspace for
 * the chat); it never chooses where this repository's diff is sent.
 */

/** A setting's levels as VS Code's `inspect()` reports them. */
export interface Levels {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

/**
 * The model from the user level only, and the settings whose workspace or folder value was
 * ignored (named so that a log line can say so). '' when the user set neither.
 */
export function scmModelOf(scm: Levels | undefined, chat: Levels | undefined): { model: string; ignored: string[] } {
  const ignored = [
    ...(text(scm?.workspaceValue) || text(scm?.workspaceFolderValue) ? ['modelGateway.scm.model'] : []),
    ...(text(chat?.workspaceValue) || text(chat?.workspaceFolderValue) ? ['modelGateway.defaultModels.chat'] : []),
  ];
  return { model: text(scm?.globalValue) || text(chat?.globalValue), ignored };
}
