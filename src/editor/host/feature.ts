import type { AgentToolbox } from '../../runtime/host/toolbox';
import type { FeatureHost } from '../../shell/featureHost';
import { ripgrepPath } from '../../shell/ripgrep';
import { workspaceGuard } from '../../shell/workspaceGuard';
import { WorkspaceTools } from '../../tools/workspaceTools';
import { EditorTools } from './editorTools';
import { ProblemWatch } from './problemWatch';
import { Renamer } from './rename';
import { TaskTool } from './taskTool';

/** What the editor knows, for the agent: problems after each edit, and the language features as tools. */
export interface EditorInsight {
  problems: ProblemWatch;
  tools: EditorTools;
  renamer: Renamer;
  tasks: TaskTool;
}

export function activateEditor(host: FeatureHost, agent: AgentToolbox): EditorInsight {
  const problems = host.own(new ProblemWatch(() => workspaceGuard()));
  // A text search for the language tools' cross-check: read-only (its approver refuses any write).
  const words = (word: string, glob: string | undefined, limit: number) =>
    new WorkspaceTools(workspaceGuard(), { approver: { approve: () => Promise.resolve({ accepted: false }) }, rgPath: ripgrepPath() }).findWord(
      word,
      glob,
      limit,
    );
  const tools = host.own(
    new EditorTools(
      () => workspaceGuard(),
      (uri) => problems.warm(uri),
      words,
    ),
  );
  agent.addSource(tools);
  const tasks = host.own(
    new TaskTool(
      () => workspaceGuard(),
      (line) => host.services.log.info(line),
    ),
  );
  agent.addSource(tasks);
  return { problems, tools, renamer: new Renamer(tools.navigation, () => workspaceGuard()), tasks };
}
