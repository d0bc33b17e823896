/** The agent's command tool as the model sees it (the runner is `host/commandTool.ts`). */
import type { ToolDefinition } from '../../tools/workspaceTools';

export const RUN_COMMAND_TOOL: ToolDefinition = {
  name: 'run_command',
  kind: 'write',
  description:
    'Run a shell command line in the workspace (tests, builds, linters, git status…) and get its exit code and output (the start and the end of a long output). Where the sandbox is on it runs there without asking: it writes only the workspace and /tmp, has no network but hosts the person opens, and cannot read their keys; else the person approves the line unless it is on their allow list. Some commands are never run. Not for interactive programs or servers that never exit.',
  parameters: {
    type: 'object',
    properties: {
      command: { type: 'string', description: 'The command line, e.g. "npm test"' },
      cwd: { type: 'string', description: 'Folder to run it in, relative to the workspace root (default: the root)' },
      network: { type: 'array', items: { type: 'string' }, description: 'Hosts it must reach (e.g. ["registry.npmjs.org"]): the person is asked to open them' },
      outside: { type: 'boolean', description: 'Run outside the sandbox (the person is asked): only when it cannot work inside' },
    },
    required: ['command'],
  },
};
