/** The agent's command tool as the model sees it (the runner is `host/commandTool.ts`). */
import type { ToolDefinition } from '../../tools/workspaceTools';

export const RUN_COMMAND_TOOL: ToolDefinition = {
  name: 'run_command',
  kind: 'write',
  description:
    'Run a shell command line in a terminal of the workspace (tests, builds, linters, git status…) and get its exit code and output (the start and the end of a long output). The person sees the exact line and approves it unless it is on their allow list; some commands are never run. Not for interactive programs or servers that never exit.',
  parameters: {
    type: 'object',
    properties: {
      command: { type: 'string', description: 'The command line, e.g. "npm test"' },
      cwd: { type: 'string', description: 'Folder to run it in, relative to the workspace root (default: the root)' },
    },
    required: ['command'],
  },
};
