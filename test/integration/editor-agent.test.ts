// @vscode-specific: the built-in TypeScript server each VS Code ships answers the problems.
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ApprovalInfo } from '../../src/common/chatProtocol';
import type { AssistantTurn, ToolCallRecord } from '../../src/common/conversation';
import { api, connectToEmulator, emulatorControl, emulatorRequests, sendAccepting, until } from './helpers';

/**
 * The agent with what the editor knows, against the real TypeScript extension (tsserver, installed
 * with code-server's built-in extensions): the problems an edit introduced come back in its result
 * and the next step fixes them; references come from the language server; the modes change which
 * tools a request carries (read in the emulator's request log).
 */
describe('agent: what the editor knows (tsserver)', function () {
  this.timeout(180_000);
  const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const lab = () => join(root(), 'editor-lab');
  const calls = (t: AssistantTurn | undefined): ToolCallRecord[] => t?.steps.flatMap((s) => s.toolCalls) ?? [];
  const lastTurn = async () => (await api()).testing.chat.current?.turns.at(-1) as AssistantTurn;
  const errorsIn = (rel: string) =>
    vscode.languages.getDiagnostics(vscode.Uri.file(join(lab(), rel))).filter((d) => d.severity === vscode.DiagnosticSeverity.Error);
  const files = {
    'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, target: 'es2020', module: 'commonjs', noEmit: true }, include: ['src'] }),
    'src/sum.ts': 'export function sumAll(values: number[]): number {\n  let total = 0;\n  for (const v of values) total += v;\n  return total;\n}\n',
    'src/report.ts': "import { sumAll } from './sum';\n\nexport const reportTotal = (xs: number[]): string => `total ${sumAll(xs)}`;\n",
    'src/cart.ts': "import { sumAll } from './sum';\n\nexport function cartTotal(prices: number[]): number {\n  return sumAll(prices) * 1.2;\n}\n",
    'src/broken.ts': 'const count = 2;\nexport const twice = cout * 2;\n',
    // For the rename: one declaration, used in two more files.
    'src/rates.ts': 'export const taxRate = 0.2;\n',
    'src/invoice.ts': "import { taxRate } from './rates';\n\nexport const invoiceTax = (net: number): number => net * taxRate;\n",
    'src/quote.ts': "import { taxRate } from './rates';\n\nexport function quoteGross(net: number): number {\n  return net * (1 + taxRate);\n}\n",
    // A file the person told the chat never to read (modelGateway.chat.secretFiles), with a use and an error of its own.
    'src/credentials.ts': "import { sumAll } from './sum';\nexport const leaked = sumAll([1]) + SECRET_TOKEN_sk_live_123;\n",
  };

  before(async () => {
    await connectToEmulator();
    await vscode.workspace.getConfiguration('modelGateway.chat').update('secretFiles', ['credentials.ts'], vscode.ConfigurationTarget.Global);
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(join(lab(), rel, '..'), { recursive: true });
      writeFileSync(join(lab(), rel), text);
    }
    // tsserver starts with the first TypeScript file the editor shows; its project is loaded by the first answer.
    await vscode.window.showTextDocument(vscode.Uri.file(join(lab(), 'src/broken.ts')), { preview: false });
    await until('tsserver reports the planted error', () => errorsIn('src/broken.ts').length > 0, 90_000);
  });

  after(async () => {
    await vscode.workspace.getConfiguration('modelGateway.chat').update('secretFiles', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    rmSync(lab(), { recursive: true, force: true });
    await (await api()).testing.chat.setMode('agent');
  });

  it('tsserver can be asked directly: a file without problems answers none (VS Code publishes nothing for it), a broken one its error', async () => {
    const { testing } = await api();
    const probe = testing.editor.problems.probe;
    const clean = await vscode.workspace.openTextDocument(vscode.Uri.file(join(lab(), 'src/cart.ts')));
    assert.equal(probe.serverName(clean.languageId), 'TypeScript');
    assert.deepEqual(await probe.problems(clean, 30_000), []);
    assert.deepEqual(vscode.languages.getDiagnostics(clean.uri), [], 'no diagnostics event can tell this file was checked');
    const broken = await vscode.workspace.openTextDocument(vscode.Uri.file(join(lab(), 'src/broken.ts')));
    const answer = await probe.problems(broken, 30_000);
    assert.deepEqual(
      answer?.map((d) => `${d.line} ${d.severity} ${d.source} ${d.code}`),
      ['2 error ts 2552'],
    );
    assert.match(answer?.[0].message ?? '', /Cannot find name 'cout'/);
    const md = await vscode.workspace.openTextDocument({ language: 'markdown', content: '# x' });
    assert.equal(await probe.problems(md, 1000), undefined, 'other languages have no probe');
  });

  it("an edit that breaks the build gets tsserver's error in its result and card; the next step fixes it; the turn ends with no error in the file", async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    const turn = await sendAccepting('Use replace_in_file: "return total;" becomes "return totl;" in editor-lab/src/sum.ts');
    const edits = calls(turn).filter((c) => c.name === 'replace_in_file');
    assert.equal(
      edits.length,
      2,
      `an edit and its fix: ${calls(turn)
        .map((c) => `${c.name}: ${c.result}`)
        .join('\n')}`,
    );
    const [breaking, fix] = edits;
    assert.equal(breaking.status, 'done', breaking.result);
    assert.match(breaking.result ?? '', /Problems this edit introduced \(1\)/);
    assert.match(breaking.result ?? '', /editor-lab\/src\/sum\.ts:4: error: Cannot find name 'totl'\. Did you mean 'total'\? \(ts 2552\)\n {4}return totl;/);
    assert.equal(breaking.problems?.introduced[0]?.source, 'ts');
    assert.equal(breaking.problems?.settled, 'diagnostics');
    assert.deepEqual(JSON.parse(fix.args), { path: 'editor-lab/src/sum.ts', old_string: 'return totl;', new_string: 'return total;' });
    assert.match(fix.result ?? '', /Problems: this edit introduced none and fixed 1\./);
    assert.deepEqual(errorsIn('src/sum.ts'), [], 'no error left in the file');
    assert.equal(turn.status, 'done');
  });

  it('a server that reports only after the deadline: the edit is "not checked", then its card, its kept result and the model learn the late report', async () => {
    const { testing } = await api();
    // A language server of its own for *.slow files: a real diagnostics collection, published 4 s after the write.
    const late = vscode.languages.createDiagnosticCollection('slow-server');
    const file = join(lab(), 'notes.slow');
    writeFileSync(file, 'alpha\n');
    try {
      await testing.chat.newConversation();
      let published = false;
      const watching = (async () => {
        for (let i = 0; i < 600 && !published; i++) {
          const call = calls(await lastTurn()).find((c) => c.name === 'replace_in_file');
          if (call?.problems?.settled === 'timeout') {
            await new Promise((r) => setTimeout(r, 1500));
            const d = new vscode.Diagnostic(new vscode.Range(0, 0, 0, 4), 'beta is not a known word', vscode.DiagnosticSeverity.Error);
            d.source = 'slow';
            late.set(vscode.Uri.file(file), [d]);
            published = true;
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      const turn = await sendAccepting('Use replace_in_file: "alpha" becomes "beta" in editor-lab/notes.slow');
      await watching;
      assert.ok(published, 'the edit was first reported as not checked');
      const call = calls(turn).find((c) => c.name === 'replace_in_file')!;
      await until(
        'the late report reached the card',
        async () => (await lastTurn()).steps.flatMap((s) => s.toolCalls).find((c) => c.id === call.id)?.problems?.lateMs !== undefined,
        30_000,
      );
      const updated = calls(await lastTurn()).find((c) => c.id === call.id)!;
      assert.equal(updated.problems?.introduced[0]?.message, 'beta is not a known word');
      assert.equal(updated.problems?.settled, 'diagnostics');
      assert.match(
        updated.result ?? '',
        /Problems this edit introduced \(1\) \(checked \d+ s after the edit, when its language server first reported\); fix them before going on:/,
      );
      assert.doesNotMatch(updated.result ?? '', /not checked/, 'the kept result no longer says it was not checked');
    } finally {
      late.dispose();
      rmSync(file, { force: true });
    }
  });

  it('"fix the errors" reads get_problems, edits, and checks again until none is left', async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    const turn = await sendAccepting('Fix the errors in editor-lab/src/broken.ts');
    const names = calls(turn).map((c) => c.name);
    // get_problems is not offered with the first request: the model finds it (find_tools), then goes on.
    assert.deepEqual(
      names,
      ['find_tools', 'get_problems', 'replace_in_file', 'get_problems'],
      calls(turn)
        .map((c) => `${c.name} ${c.args}: ${c.result}`)
        .join('\n'),
    );
    assert.match(calls(turn)[0].result ?? '', /- get_problems: /);
    assert.match(calls(turn)[1].result ?? '', /1 problem in editor-lab\/src\/broken\.ts \(1 error\)/);
    assert.match(calls(turn)[3].result ?? '', /^No errors or warnings in editor-lab\/src\/broken\.ts/);
    assert.deepEqual(errorsIn('src/broken.ts'), []);
  });

  it("find_references returns tsserver's usages across 3 files, each as path:line with the line's text", async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    await testing.chat.send('Where is sumAll used in editor-lab/src/sum.ts?', [], []);
    const call = calls(await lastTurn()).find((c) => c.name === 'find_references');
    assert.ok(call, 'find_references was called');
    assert.equal(call.status, 'done', call.result);
    const result = call.result ?? '';
    assert.match(result, /^References to sumAll: \d+ in 3 files/);
    assert.match(result, /editor-lab\/src\/sum\.ts:1: export function sumAll\(values: number\[\]\): number \{/);
    assert.match(result, /editor-lab\/src\/report\.ts:3: export const reportTotal = .*sumAll\(xs\)/);
    assert.match(result, /editor-lab\/src\/cart\.ts:4: return sumAll\(prices\) \* 1\.2;/);
  });

  it("from the attacker's side: a secret file's uses and problems never reach the model, even with the language server reporting them", async () => {
    const { testing } = await api();
    const secret = vscode.Uri.file(join(lab(), 'src/credentials.ts'));
    await vscode.window.showTextDocument(secret, { preview: false, preserveFocus: true });
    await until("tsserver reports the secret file's own error", () => vscode.languages.getDiagnostics(secret).length > 0, 60_000);
    const nav = testing.editor.tools.navigation;
    // The server itself names the secret file among the references: what is checked is that we do not.
    const sum = vscode.Uri.file(join(lab(), 'src/sum.ts'));
    await until(
      'tsserver lists the secret file among the references',
      async () =>
        ((await vscode.commands.executeCommand<vscode.Location[]>('vscode.executeReferenceProvider', sum, new vscode.Position(0, 17))) ?? []).some(
          (l) => l.uri.fsPath === secret.fsPath,
        ),
      30_000,
    );
    const refs = await nav.references({ symbol: 'sumAll', path: 'editor-lab/src/sum.ts' });
    assert.doesNotMatch(refs, /SECRET_TOKEN|credentials/);
    assert.match(refs, /\d more in files the chat does not read/);
    const problems = await nav.problems({});
    assert.doesNotMatch(problems, /SECRET_TOKEN|credentials/);
    await assert.rejects(nav.documentSymbols({ path: 'editor-lab/src/credentials.ts' }), /may hold credentials/);
    await assert.rejects(nav.references({ symbol: 'leaked', path: 'editor-lab/src/credentials.ts' }), /may hold credentials/);
  });

  it('rename_symbol renames across 3 files with one approval (one multi-file diff); one Undo puts all 3 back', async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    const read = (rel: string) => readFileSync(join(lab(), rel), 'utf8');
    const originals = Object.fromEntries(['src/rates.ts', 'src/invoice.ts', 'src/quote.ts'].map((f) => [f, read(f)]));
    const asked: ApprovalInfo[] = [];
    const turn = await sendAccepting('Rename taxRate to vatRate in editor-lab/src/rates.ts', asked);
    const call = calls(turn).find((c) => c.name === 'rename_symbol');
    assert.ok(
      call,
      `rename_symbol was called: ${calls(turn)
        .map((c) => c.name)
        .join(', ')}`,
    );
    assert.equal(call.status, 'done', call.result);
    assert.equal(asked.length, 1, 'one approval for the whole rename');
    assert.deepEqual(asked[0].files?.slice().sort(), ['editor-lab/src/invoice.ts', 'editor-lab/src/quote.ts', 'editor-lab/src/rates.ts']);
    assert.match(call.result ?? '', /^Renamed taxRate to vatRate: 5 changes in 3 files/);
    assert.match(call.result ?? '', /Problems: this edit introduced none/);
    for (const f of Object.keys(originals)) {
      assert.doesNotMatch(read(f), /taxRate/, `${f} no longer names taxRate`);
      assert.match(read(f), /vatRate/, `${f} names vatRate`);
    }
    assert.deepEqual(errorsIn('src/quote.ts'), []);
    assert.equal(call.edits?.length, 3);

    testing.services.prompts.answerNext(true);
    await testing.chat.undoEdit(turn.id, call.id);
    for (const [f, text] of Object.entries(originals)) assert.equal(read(f), text, `${f} is back as it was`);
    assert.equal((await lastTurn()).steps.flatMap((s) => s.toolCalls).find((c) => c.id === call.id)?.undone, true);
  });

  it("from the attacker's side: a rename that would also change a secret file is refused whole; nothing is written", async () => {
    const { testing } = await api();
    const before = ['src/sum.ts', 'src/report.ts', 'src/cart.ts', 'src/credentials.ts'].map((f) => readFileSync(join(lab(), f), 'utf8'));
    const { renamer } = testing.editor;
    await assert.rejects(
      renamer.propose({ symbol: 'sumAll', new_name: 'addAll', path: 'editor-lab/src/sum.ts' }),
      /would also change 1 file the chat may not edit .*nothing was renamed/,
    );
    await assert.rejects(renamer.propose({ symbol: 'sumAll', new_name: 'add all; rm -rf', path: 'editor-lab/src/sum.ts' }), /is not an identifier/);
    assert.deepEqual(
      ['src/sum.ts', 'src/report.ts', 'src/cart.ts', 'src/credentials.ts'].map((f) => readFileSync(join(lab(), f), 'utf8')),
      before,
    );
  });

  it('run_task runs a tasks.json task with the $tsc problem matcher after one approval; its problems come back', async () => {
    const { testing } = await api();
    // A file nobody opens: only the task's compiler run can report its error.
    writeFileSync(join(lab(), 'src/late.ts'), "export const late: number = 'not a number';\n");
    // And a secret file nobody opened ($tsc reports on files without an open document only), with an error of its own.
    mkdirSync(join(lab(), 'src/vault'), { recursive: true });
    writeFileSync(join(lab(), 'src/vault/credentials.ts'), "export const token: number = 'sk-live-vault-secret';\n");
    // The repository's compiler (the suite runs from its out/integration): the packaged extension has none.
    const { suiteIndex } = (globalThis as unknown as { __modelGatewayTestConfig: { suiteIndex: string } }).__modelGatewayTestConfig;
    const tsc = join(suiteIndex, '..', '..', '..', 'node_modules', 'typescript', 'bin', 'tsc');
    assert.ok(existsSync(tsc), tsc);
    const tasksFile = join(root(), '.vscode', 'tasks.json');
    mkdirSync(join(root(), '.vscode'), { recursive: true });
    writeFileSync(
      tasksFile,
      JSON.stringify({
        version: '2.0.0',
        tasks: [
          {
            label: 'check lab',
            type: 'process',
            command: process.execPath,
            args: [tsc, '-p', 'editor-lab', '--noEmit', '--pretty', 'false'],
            problemMatcher: '$tsc',
          },
        ],
      }),
    );
    try {
      await until('VS Code reads the new tasks.json', async () => (await testing.editor.tasks.tasks()).some((t) => t.label === 'check lab'), 30_000);

      await testing.chat.newConversation();
      const asked: ApprovalInfo[] = [];
      const call = calls(await sendAccepting('Run the task "check lab" and tell me what it finds', asked)).find((c) => c.name === 'run_task');
      assert.ok(call, 'run_task was called');
      assert.equal(asked.length, 1, 'one approval');
      assert.equal(asked[0].kind, 'command');
      assert.ok(asked[0].action?.includes('editor-lab') && asked[0].action.includes('tsc'), `the approval shows the command line: ${asked[0].action}`);
      assert.match(asked[0].reason ?? '', /tasks\.json always asks/);
      const result = call.result ?? '';
      assert.match(result, /^Task "check lab" \(.*tsc.*\) exited with code [12] after/);
      assert.doesNotMatch(result, /SECRET_TOKEN|credentials|sk-live-vault-secret/);
      // VS Code 1.100 shows a task's problems in the Problems panel but does not pass them to
      // extensions (vscode.languages.getDiagnostics stays empty for them; the e2e screenshot
      // agent-task-done.png shows the panel's count): the result says so and how to see the output.
      if (vscode.version.startsWith('1.100.'))
        assert.match(result, /No problems from its problem matcher reached the chat[\s\S]*run its command line with run_command: .*tsc -p editor-lab/);
      else {
        assert.match(result, /Problems its problem matcher reported \(\d+, \d+ errors?\)/);
        assert.match(
          result,
          /editor-lab\/src\/late\.ts:1: error: Type 'string' is not assignable to type 'number'\. \(ts 2322\)\n {4}export const late: number = 'not a number';/,
        );
        // The secret file's own error is reported by the compiler too: counted, never shown.
        assert.match(result, /more in files the chat does not read were left out/);
      }
      // An unknown label lists the tasks there are.
      assert.match(
        (
          await testing.editor.tasks.run(
            'run_task',
            JSON.stringify({ label: 'nope' }),
            { approveAction: () => Promise.reject(new Error('not asked')) },
            undefined,
            undefined,
            false,
          )
        ).content,
        /No task is labelled "nope"\. The tasks of this workspace.*:\n {2}check lab \(tasks\.json\)/s,
      );
    } finally {
      rmSync(join(root(), '.vscode'), { recursive: true, force: true });
      rmSync(join(lab(), 'src/late.ts'), { force: true });
      rmSync(join(lab(), 'src/vault'), { recursive: true, force: true });
    }
  });

  it('find_definition, workspace_symbols and document_symbols answer from the language server', async () => {
    const { testing } = await api();
    const nav = testing.editor.tools.navigation;
    assert.match(await nav.definitions({ symbol: 'sumAll', path: 'editor-lab/src/cart.ts', line: 4 }), /editor-lab\/src\/sum\.ts:1: export function sumAll/);
    assert.match(await nav.workspaceSymbols({ query: 'cartTotal' }), /function cartTotal(\(\))? — editor-lab\/src\/cart\.ts:3/);
    assert.match(await nav.documentSymbols({ path: 'editor-lab/src/sum.ts' }), /function sumAll — lines 1-5/);
    await assert.rejects(nav.references({ symbol: 'nothingLikeThis', path: 'editor-lab/src/sum.ts' }), /does not appear in editor-lab\/src\/sum\.ts/);
  });

  it('Ask mode: the request carries no edit, command or MCP tool; Plan mode adds only the plan', async () => {
    const { testing } = await api();
    const offered = async () => {
      const path = (await emulatorRequests())
        .reverse()
        .find((l) => / \/v1\/(chat\/completions|messages|responses)$/.test(l))!
        .split(' ')[1];
      const seen = (await emulatorControl('last-request', { path })) as { body: { tools?: { name?: string; function?: { name: string } }[] } };
      return (seen.body.tools ?? []).map((t) => t.function?.name ?? t.name ?? '').sort();
    };
    await testing.chat.setMode('agent');
    await testing.chat.newConversation();
    await testing.chat.send('What does editor-lab/src/sum.ts do?', [], []);
    const agentTools = await offered();
    for (const t of ['replace_in_file', 'create_file', 'run_command', 'update_plan', 'find_tools']) assert.ok(agentTools.includes(t), `agent mode offers ${t}`);
    // The language servers' tools are found when needed (find_tools), not sent with every request.
    for (const t of ['get_problems', 'find_references', 'rename_symbol', 'run_task'])
      assert.ok(!agentTools.includes(t), `agent mode's first request leaves ${t} to find_tools`);

    await testing.chat.setMode('ask');
    await testing.chat.newConversation();
    await testing.chat.send('Use replace_in_file: "return total;" becomes "return 0;" in editor-lab/src/sum.ts', [], []);
    const askTools = await offered();
    assert.ok(askTools.includes('read_file') && askTools.includes('find_tools'), askTools.join(', '));
    for (const t of askTools)
      assert.ok(!/^(replace_in_file|create_file|run_command|rename_symbol|run_task|update_plan)$/.test(t) && !t.includes('__'), `ask mode offers no ${t}`);
    assert.equal((await lastTurn()).mode, 'ask');
    assert.ok(!calls(await lastTurn()).some((c) => c.name === 'replace_in_file' && c.status === 'done'), 'nothing was edited');

    await testing.chat.setMode('plan');
    await testing.chat.newConversation();
    await testing.chat.send('Read editor-lab/src/sum.ts, then plan a mean function', [], []);
    const planTools = await offered();
    assert.deepEqual(
      planTools.filter((t) => !askTools.includes(t)),
      ['update_plan'],
    );
    await testing.chat.setMode('agent');
  });

  it('a multi-step request keeps a plan on the turn: written first, marked as it goes, all done at the end, kept with the conversation', async () => {
    const { testing } = await api();
    await testing.chat.newConversation();
    const seen: string[] = [];
    let settled = false;
    const sent = testing.chat.send('Read editor-lab/src/sum.ts, then read editor-lab/src/cart.ts, then summarise both', [], []).finally(() => (settled = true));
    while (!settled) {
      const plan = (testing.chat.current?.turns.at(-1) as AssistantTurn | undefined)?.plan;
      const line = plan?.map((i) => i.status[0]).join('') ?? '';
      if (line && seen.at(-1) !== line) seen.push(line);
      await new Promise((r) => setTimeout(r, 5));
    }
    await sent;
    const turn = await lastTurn();
    assert.equal(calls(turn)[0].name, 'update_plan', 'the plan comes first');
    assert.deepEqual(
      turn.plan?.map((i) => i.text),
      ['Read editor-lab/src/sum.ts', 'read editor-lab/src/cart.ts', 'summarise both'],
    );
    assert.ok(turn.plan?.every((i) => i.status === 'done'));
    assert.ok(
      calls(turn).some((c) => c.name === 'read_file' && /cart\.ts/.test(c.args)),
      'the steps did their work',
    );
    // The plans as the model wrote them, one update_plan call each, in order: the first has the
    // first step in progress, and each marks one more step done.
    const written = calls(turn)
      .filter((c) => c.name === 'update_plan')
      .map((c) => (JSON.parse(c.args) as { items: { status: string }[] }).items.map((i) => i.status[0]).join(''));
    assert.deepEqual(written, ['ipp', 'dip', 'ddi', 'ddd']);
    // What the turn showed while it ran, read every few ms (a busy machine reads less often and
    // may miss a step): only plans the model wrote, in the order it wrote them.
    let at = 0;
    for (const line of seen) {
      while (at < written.length && written[at] !== line) at++;
      assert.ok(at < written.length, `the turn showed ${line}, not a plan written in that order (seen: ${seen.join(' → ')})`);
    }
    const id = testing.chat.current!.id;
    await testing.chat.newConversation();
    await testing.chat.open(id);
    assert.deepEqual((testing.chat.current?.turns.at(-1) as AssistantTurn).plan, turn.plan, 'the plan was stored with the conversation');
  });
});
