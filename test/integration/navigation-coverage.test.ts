// @vscode-specific: the built-in language servers each VS Code ships answer the navigation.
import { strict as assert } from 'node:assert';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ApprovalInfo } from '../../src/common/chatProtocol';
import { api, connectToEmulator, sendAccepting } from './helpers';

/**
 * Navigation that says when it may be partial, against the real tsserver: in a folder without
 * tsconfig.json tsserver builds an inferred project from the open files only, so a use in a file
 * nobody opened is not among its references. The tools check the server's answer against the text,
 * open the files where the name appears (the server loads them) and ask again; what is still left
 * out is named, with why. With a tsconfig.json the server's answer is whole and nothing is added.
 */
describe('navigation: a language server whose project may not cover the workspace', function () {
  this.timeout(180_000);
  const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  // Names of their own, so that no other suite's files share them.
  const loose = () => join(root(), 'loose-lab');
  const project = () => join(root(), 'project-lab');
  const files = (name: string): Record<string, string> => ({
    'greet.ts': `export function ${name}(who: string): string {\n  return 'Hello ' + who;\n}\n`,
    'welcome.ts': `import { ${name} } from './greet';\n\nexport const welcome = ${name}('team');\n`,
    'farewell.ts': `import { ${name} } from './greet';\n\nexport const first = ${name}('a');\nexport const second = ${name}('b');\n`,
    // The name in a comment only: not a reference, whatever the project.
    'notes.ts': `// ${name} is what the welcome screen calls.\nexport const notes = 1;\n`,
  });

  before(async () => {
    await connectToEmulator();
    for (const [rel, text] of Object.entries(files('greetLoose'))) {
      mkdirSync(loose(), { recursive: true });
      writeFileSync(join(loose(), rel), text);
    }
    mkdirSync(project(), { recursive: true });
    writeFileSync(join(project(), 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true } }));
    for (const [rel, text] of Object.entries(files('greetProject'))) writeFileSync(join(project(), rel), text);
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    rmSync(loose(), { recursive: true, force: true });
    rmSync(project(), { recursive: true, force: true });
  });

  it('without tsconfig.json: references find the uses in files nobody opened, and name the text matches the server did not count, with why', async () => {
    const { testing } = await api();
    const result = await testing.editor.tools.navigation.references({ symbol: 'greetLoose', path: 'loose-lab/greet.ts' });
    // The two files that use it, though none was open when asked.
    assert.match(result, /^References to greetLoose: 6 in 3 files/, result);
    assert.match(result, /loose-lab\/welcome\.ts:3: export const welcome = greetLoose\('team'\);/);
    assert.match(result, /loose-lab\/farewell\.ts:4: export const second = greetLoose\('b'\);/);
    // The comment is a text match only: named as such, with the reason the answer may be partial.
    assert.match(
      result,
      /May be partial: no tsconfig\.json or jsconfig\.json covers this file, so the TypeScript server knows only the files open in the editor and what they import\. "greetLoose" also appears in 1 file the language server did not report/,
    );
    assert.match(result, /loose-lab\/notes\.ts:1: \/\/ greetLoose is what the welcome screen calls\./);
  });

  it('with tsconfig.json: the answer is whole and nothing is added (the comment is the server’s verdict)', async () => {
    const { testing } = await api();
    const result = await testing.editor.tools.navigation.references({ symbol: 'greetProject', path: 'project-lab/greet.ts' });
    assert.match(result, /^References to greetProject: 6 in 3 files/, result);
    assert.doesNotMatch(result, /May be partial|notes\.ts/);
  });

  it('without a path, a name no running server knows yet is found by its text and its server started', async () => {
    const { testing } = await api();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const result = await testing.editor.tools.navigation.definitions({ symbol: 'greetLoose' });
    assert.match(result, /loose-lab\/greet\.ts:1: export function greetLoose/, result);
  });

  it('a rename without tsconfig.json renames the uses in unopened files too, and tells the person and the model what it left unchanged', async () => {
    const { testing } = await api();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace.getConfiguration('modelGateway.agent').update('autoApprove', undefined, vscode.ConfigurationTarget.Global);
    await testing.chat.newConversation();
    const asked: ApprovalInfo[] = [];
    const turn = await sendAccepting('Rename greetLoose to sayHello in loose-lab/greet.ts', asked);
    const call = turn.steps.flatMap((s) => s.toolCalls).find((c) => c.name === 'rename_symbol');
    assert.ok(call, 'rename_symbol was called');
    assert.equal(call.status, 'done', call.result);
    for (const f of ['greet.ts', 'welcome.ts', 'farewell.ts']) assert.match(readFileSync(join(loose(), f), 'utf8'), /sayHello/, f);
    assert.match(readFileSync(join(loose(), 'notes.ts'), 'utf8'), /greetLoose/, 'the comment is left as it was');
    // The proposal named the file it leaves unchanged, before the person accepted.
    assert.match(asked[0]?.path ?? JSON.stringify(asked), /not in the language server's rename, left unchanged: loose-lab\/notes\.ts/);
    assert.match(call.result ?? '', /May be partial: no tsconfig\.json[\s\S]*loose-lab\/notes\.ts:1:[\s\S]*Those places were not renamed\./);
  });
});
