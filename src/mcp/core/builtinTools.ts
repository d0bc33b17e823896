/**
 * Tools VS Code and its built-in Copilot extension register with `vscode.lm` that do the same job
 * as one of ours. They are never offered to our chat: each costs input tokens with every request
 * that carries it (VS Code 1.139.1's Copilot alone registers 38, about 6,000 tokens), and two tools
 * for one job make the model's choice worse. The names are those of VS Code 1.139.1 and Copilot
 * Chat's `languageModelTools` contribution; VS Code's internal tools (`…_internal`) are left out too.
 */
const SAME_JOB: Readonly<Record<string, string>> = {
  copilot_readFile: 'read_file',
  copilot_listDirectory: 'list_dir',
  copilot_readProjectStructure: 'list_dir',
  copilot_findFiles: 'find_files',
  copilot_findTestFiles: 'find_files',
  copilot_findTextInFiles: 'search_text',
  copilot_searchCodebase: 'semantic_search',
  search_subagent: 'semantic_search',
  explore_subagent: 'semantic_search',
  copilot_searchWorkspaceSymbols: 'workspace_symbols',
  copilot_getErrors: 'get_problems',
  copilot_createFile: 'create_file',
  copilot_createDirectory: 'create_file',
  copilot_replaceString: 'replace_in_file',
  copilot_multiReplaceString: 'replace_in_file',
  copilot_applyPatch: 'replace_in_file',
  copilot_insertEdit: 'replace_in_file',
  copilot_editFiles: 'replace_in_file',
  copilot_viewImage: 'read_file',
  run_in_terminal: 'run_command',
  get_terminal_output: 'run_command',
  terminal_last_command: 'run_command',
  terminal_selection: 'run_command',
  execution_subagent: 'run_command',
  create_and_run_task: 'run_task',
  run_task: 'run_task',
  get_task_output: 'run_task',
  manage_todo_list: 'update_plan',
  skill: 'read_skill',
};

/** Our tool that does what this VS Code tool does, when it is one of VS Code's or Copilot's own. */
export function sameJobAs(vscodeToolName: string): string | undefined {
  if (Object.prototype.hasOwnProperty.call(SAME_JOB, vscodeToolName)) return SAME_JOB[vscodeToolName];
  if (vscodeToolName.endsWith('_internal')) return 'VS Code';
  return undefined;
}
