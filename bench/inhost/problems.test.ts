import { strict as assert } from 'node:assert';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { AssistantTurn } from '../../src/common/conversation';
import { api, connectToEmulator, until } from '../../test/integration/helpers';

/**
 * `npm run bench -- agent`, in a real VS Code with tsserver: from an accepted edit written to its
 * problems reported (the `waitedMs` each edit's card keeps), over 20 edits of a small TypeScript
 * project through the chat: 8 that break the build (each followed by the fix the model makes, a
 * second edit) and 4 that change only a comment (no server says anything: the learned deadline).
 */
describe('bench: problems after an edit', function () {
  this.timeout(600_000);
  const lab = () => join(vscode.workspace.workspaceFolders![0].uri.fsPath, 'bench-lab');

  before(async () => {
    await connectToEmulator();
    mkdirSync(join(lab(), 'src'), { recursive: true });
    writeFileSync(join(lab(), 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ['src'] }));
    writeFileSync(
      join(lab(), 'src', 'sum.ts'),
      '// note 0\nexport function sumAll(values: number[]): number {\n  let total = 0;\n  for (const v of values) total += v;\n  return total;\n}\n',
    );
    writeFileSync(join(lab(), 'src', 'use.ts'), "import { sumAll } from './sum';\nexport const six = sumAll([1, 2, 3]);\n");
    await vscode.workspace.getConfiguration('modelGateway.agent').update('autoApprove', { edits: true }, vscode.ConfigurationTarget.Global);
    await vscode.window.showTextDocument(vscode.Uri.file(join(lab(), 'src', 'use.ts')));
    // tsserver is up once it has answered for the project.
    await until(
      'tsserver answers',
      async () =>
        ((await vscode.commands.executeCommand<unknown[]>('vscode.executeDocumentSymbolProvider', vscode.Uri.file(join(lab(), 'src', 'use.ts')))) ?? [])
          .length > 0,
      120_000,
    );
  });

  after(async () => {
    await vscode.workspace.getConfiguration('modelGateway.agent').update('autoApprove', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    rmSync(lab(), { recursive: true, force: true });
  });

  it('measures 20 edits', async () => {
    const { testing } = await api();
    const waits: number[] = [];
    const ask = async (text: string) => {
      await testing.chat.newConversation();
      await testing.chat.send(text, [], []);
      const turn = testing.chat.current?.turns.at(-1) as AssistantTurn;
      for (const c of turn.steps.flatMap((s) => s.toolCalls)) if (c.problems) waits.push(c.problems.waitedMs);
    };
    let note = 0;
    for (let round = 0; round < 4; round++) {
      await ask('Use replace_in_file: "return total;" becomes "return totl;" in bench-lab/src/sum.ts');
      await ask('Use replace_in_file: "let total = 0;" becomes "let total = zero;" in bench-lab/src/sum.ts');
      await ask(`Use replace_in_file: "// note ${note}" becomes "// note ${note + 1}" in bench-lab/src/sum.ts`);
      note++;
    }
    assert.equal(waits.length, 20, `20 edits reported their problems (${waits.length})`);
    const sorted = [...waits].sort((a, b) => a - b);
    const metrics = ((globalThis as { __modelGatewayMetrics?: Record<string, number> }).__modelGatewayMetrics ??= {});
    metrics.problemsEdits = waits.length;
    metrics.problemsMedianMs = sorted[Math.floor(sorted.length / 2)];
    metrics.problemsP95Ms = sorted[Math.ceil(sorted.length * 0.95) - 1];
    metrics.problemsMaxMs = sorted.at(-1)!;
  });
});
