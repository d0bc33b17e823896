import { strict as assert } from 'node:assert';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as vscode from 'vscode';
import { api, connectToEmulator } from './helpers';
import {
  childrenSettled,
  collector,
  completions,
  handleCount,
  indexGenerations,
  listenerTotal,
  openedSince,
  restartMcp,
  sample,
  sampleTable,
  turn,
} from './soakTools';

/**
 * A short working day in one window (the long one is `npm run bench -- soak`): 50 chat turns with
 * file reads and conversation switches, 300 inline completions (answered, cancelled, accepted)
 * and 5 MCP server kills. After a warm-up and a forced collection, memory may grow by at most a
 * tenth, and handles, listeners on our events, open files, terminals and child processes come back
 * to where they were.
 */
describe('a short working day in one window: memory and handles stay flat', function () {
  this.timeout(900_000);
  const settings = () => vscode.workspace.getConfiguration('modelGateway');
  const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const file = () => join(root(), 'src', 'soak-complete.ts');
  let modeBefore = '';
  const server = join(resolve(__dirname, '..', '..'), 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

  before(async () => {
    await connectToEmulator();
    await settings().update('defaultModels.chat', 'gpt-4o-mini', vscode.ConfigurationTarget.Global);
    await settings().update('defaultModels.completion', 'codestral-emu', vscode.ConfigurationTarget.Global);
    await settings().update('mcp.servers', { soak: { command: process.execPath, args: [server, 'stdio'] } }, vscode.ConfigurationTarget.Global);
    modeBefore = (await api()).testing.chat.mode;
    await (await api()).testing.chat.setMode('agent');
    writeFileSync(file(), "import { greet } from './greet';\n// notes \nexport function welcome(name: string): string {\n  return gre\n}\n");
  });

  after(async () => {
    if (modeBefore) await (await api()).testing.chat.setMode(modeBefore);
    for (const key of ['defaultModels.chat', 'defaultModels.completion', 'mcp.servers'])
      await settings().update(key, undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    rmSync(file(), { force: true });
  });

  async function session(
    turns: number,
    completionCount: number,
    restarts: number,
    offset: number,
  ): Promise<{ answers: number; reads: number; answered: number; sample: string; skips: string }> {
    const { testing } = await api();
    let answers = 0;
    let reads = 0;
    let answered = 0;
    let sample = '';
    for (let t = 0; t < turns; t++) {
      // A new conversation every ten turns; the history then holds them all.
      if (t % 10 === 0) await testing.chat.newConversation();
      const answer = await turn(
        t % 2 === 0 ? `Read the file src/greet.ts and say what it does (${offset + t})` : `Say something short about step ${offset + t}`,
      );
      if (answer.status === 'done') answers++;
      if (answer.steps.some((s) => s.toolCalls.some((c) => c.name === 'read_file' && c.status === 'done'))) reads++;
      else if (t % 2 === 0)
        sample ||= JSON.stringify(answer.steps.map((s) => ({ text: s.text.slice(0, 120), calls: s.toolCalls.map((c) => `${c.name}:${c.status}`) })));
      if (t % Math.ceil(turns / Math.max(1, restarts)) === 0 && restarts > 0) {
        await restartMcp('soak');
        restarts--;
      }
    }
    let skips = '';
    for (let i = 0; i < completionCount; i += 50) {
      const done = await completions(file(), Math.min(50, completionCount - i), offset * 1000 + i);
      answered += done.answered;
      skips = done.skips;
    }
    while (restarts-- > 0) await restartMcp('soak');
    return { answers, reads, answered, sample, skips };
  }

  it('50 chat turns, 300 completions and 5 MCP restarts after a warm-up: heap and RSS within 10%, handles, files, terminals and processes back', async () => {
    const gc = collector();
    // Warm-up: every path, often enough that what is loaded and cached once, and the allocators'
    // high-water mark, are in the baseline (after 6 turns RSS still grew 10–17% over the day while
    // the heap stayed flat; after 20 it grows 5%).
    await session(20, 100, 1, 0);
    const before = await sample(gc);
    const day = await session(50, 300, 5, 100);
    // The last restart's process and the last requests' sockets settle first.
    await new Promise((r) => setTimeout(r, 2000));
    await childrenSettled(before.children);
    const after = await sample(gc);
    const table = sampleTable(before, after);
    const report = `after ${day.answers} answers (${day.reads} with a file read), ${day.answered} completions answered, 5 MCP restarts:\n${table.map(([k, b, a]) => `        ${String(k).padEnd(28)} ${String(b).padStart(8)} → ${String(a).padStart(8)}`).join('\n')}`;
    console.log(`      ${report}`);
    const metrics = ((globalThis as { __modelGatewayMetrics?: Record<string, number> }).__modelGatewayMetrics ??= {});
    metrics.soakHeapGrowthPct = ((after.heapMB - before.heapMB) / before.heapMB) * 100;
    metrics.soakRssGrowthPct = ((after.rssMB - before.rssMB) / before.rssMB) * 100;
    assert.equal(day.answers, 50, 'every turn answered');
    assert.ok(day.reads >= 20, `the reads ran (${day.reads}; a turn without: ${day.sample})`);
    assert.ok(day.answered >= 200, `completions were answered (${day.answered}; skipped as: ${day.skips})`);
    assert.ok(after.heapMB <= before.heapMB * 1.1, `heap ${before.heapMB.toFixed(1)} → ${after.heapMB.toFixed(1)} MB`);
    assert.ok(after.rssMB <= before.rssMB * 1.1, `RSS ${before.rssMB.toFixed(1)} → ${after.rssMB.toFixed(1)} MB; ${report}`);
    assert.equal(after.terminals, before.terminals, 'terminals');
    assert.ok(
      listenerTotal(after) <= listenerTotal(before),
      `listeners on our events ${JSON.stringify(before.listeners)} → ${JSON.stringify(after.listeners)}`,
    );
    assert.equal(after.children, before.children, `child processes: ${before.childNames.join(', ')} → ${after.childNames.join(', ')}`);
    assert.ok(indexGenerations(after).length <= 1, `the index has files of one generation open at most (${after.indexFiles.join(', ')})`);
    assert.ok(after.openFiles <= before.openFiles + 2, `open files ${before.openFiles} → ${after.openFiles} (new: ${openedSince(before, after).join(', ')})`);
    assert.ok(
      handleCount(after.handles) <= handleCount(before.handles) + 2,
      `active handles ${JSON.stringify(before.handles)} → ${JSON.stringify(after.handles)}`,
    );
  });
});
