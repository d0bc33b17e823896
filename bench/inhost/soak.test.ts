import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import * as vscode from 'vscode';
import type { AssistantTurn } from '../../src/common/conversation';
import type { UsageReport } from '../../src/common/usageReport';
import { config } from '../../test/integration/config';
import { api, connectToEmulator, emulatorControl, everythingServerPath, runAnswering, until } from '../../test/integration/helpers';
import {
  chatRequestLog,
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
  type Sample,
  type SentRequest,
} from '../../test/integration/soakTools';

/**
 * `npm run bench -- soak`: a working day in one real extension host (code-server), in two halves
 * with a window reload between them. Over the day: 300 chat turns (file reads, edits accepted and
 * edits rejected, approved commands, questions), 2,000 inline completions (typed, every fifth
 * cancelled, every third accepted), 50 MCP server kills, 500 file saves the index follows, 30 Usage
 * view refreshes and 20 switches to an earlier conversation. The gateway fails 5% of chat and
 * completion requests (429 with Retry-After, 500, a stream cut mid-answer, a 30 s stall before the
 * first byte). Every 50 turns, after a forced collection: the extension host's heap, RSS, active
 * handles, open files, terminals and child processes, and the chat webview's elements and JS heap.
 */

/** `MG_SOAK_SCALE=0.2`: a fifth of the day, to try the bench itself out (the figures count only at 1). */
const SCALE = Number(process.env.MG_SOAK_SCALE ?? 1);
const TURNS = 300 * SCALE;
const WINDOWS = 6;
const TOTALS = { completions: 2000 * SCALE, kills: 50 * SCALE, saves: 500 * SCALE, refreshes: 30 * SCALE, switches: 20 * SCALE };
/** How much of `total` window `w` (0-based) takes: the totals spread evenly over the windows. */
const share = (total: number, w: number) => Math.floor((total * (w + 1)) / WINDOWS) - Math.floor((total * w) / WINDOWS);

interface Row {
  turn: number;
  phase: number;
  sample: Sample;
  webview: { nodes: number; jsHeapMB: number; turnsDrawn: number };
}

interface Outcomes {
  answered: number;
  errorCards: number;
  /** Error cards of a cut stream that kept the text that had arrived. */
  partialKept: number;
  /** Turns that ended neither way (stopped, or still streaming): must be none. */
  unended: string[];
  reads: number;
  editsAccepted: number;
  editsRejected: number;
  commands: number;
  completionsAnswered: number;
  completionsAsked: number;
  kills: number;
  saves: number;
  indexUpdates: number;
  refreshes: number;
  switches: number;
}

interface State {
  phase: number;
  rows: Row[];
  baselines: Sample[];
  outcomes: Outcomes;
  /** Each conversation and its turn count, as the first half left it (the reload must keep them). */
  conversations: Record<string, number>;
  flag: number;
  /** The first half's chat requests by body hash (`chatRequestLog`), for naming a duplicate across the reload. */
  requests?: Record<string, SentRequest[]>;
}

/** A request the gateway answered twice, named by what its sends said and who sent them. */
function describeTwice(hash: string, sends: SentRequest[] | undefined): string {
  if (!sends?.length) return `${hash.slice(0, 12)}: not seen leaving the extension host`;
  const s = sends[0];
  const gaps = sends.slice(1).map((x, i) => `${((x.at - sends[i].at) / 1000).toFixed(1)} s`);
  return `${hash.slice(0, 12)}: sent ${sends.length}× (${gaps.join(', ') || 'once'} apart), ${s.model}${s.stream ? ' streamed' : ''}, system "${s.system.slice(0, 40)}", user "${s.user}", from ${[...new Set(sends.map((x) => x.callers))].join(' | ')}`;
}

const stateFile = () => join(config.dialogDir ?? '', 'soak-state.json');
const metrics = () => ((globalThis as { __modelGatewayMetrics?: Record<string, number> }).__modelGatewayMetrics ??= {});

/** The chat webview's document, read by the launcher in the browser (its `probe-N.json` round trip). */
let probes = 0;
async function webviewProbe(): Promise<Row['webview']> {
  await vscode.commands.executeCommand('modelGateway.chat.focus');
  await new Promise((r) => setTimeout(r, 300));
  const n = probes++;
  const ask = join(config.dialogDir ?? '', `probe-${Date.now()}${n}.json`);
  writeFileSync(ask, '{}');
  const answerFile = ask.replace('.json', '.answer.json');
  const answer = await until(
    'the launcher reads the webview',
    () => (existsSync(answerFile) ? (JSON.parse(readFileSync(answerFile, 'utf8')) as Row['webview'] & { error?: string }) : undefined),
    20_000,
  );
  rmSync(ask, { force: true });
  rmSync(answerFile, { force: true });
  if (answer.error) return { nodes: -1, jsHeapMB: -1, turnsDrawn: -1 };
  return answer;
}

describe('bench: a working day in one window', function () {
  this.timeout(5_400_000);
  const settings = () => vscode.workspace.getConfiguration('modelGateway');
  const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const lab = () => join(root(), 'soak-lab');
  const completionFile = () => join(lab(), 'complete.ts');
  const editFile = () => join(lab(), 'edit.ts');
  const savedFile = (i: number) => join(lab(), `saved-${i % 5}.ts`);

  async function prepare(first: boolean): Promise<void> {
    if (first) {
      await connectToEmulator();
      assert.equal(await runAnswering('modelGateway.setAccessToken', config.demoAccessToken, config.demoUserId), true);
      await settings().update('defaultModels.chat', 'gpt-4o-mini', vscode.ConfigurationTarget.Global);
      await settings().update('defaultModels.completion', 'codestral-emu', vscode.ConfigurationTarget.Global);
      await settings().update('defaultModels.embeddings', 'embed-emu-256', vscode.ConfigurationTarget.Global);
      await settings().update(
        'mcp.servers',
        { soak: { command: process.execPath, args: [everythingServerPath(), 'stdio'] } },
        vscode.ConfigurationTarget.Global,
      );
      mkdirSync(lab(), { recursive: true });
      writeFileSync(completionFile(), "import { greet } from './greet';\n// notes \nexport function welcome(name: string): string {\n  return gre\n}\n");
      writeFileSync(editFile(), "export const flag = 'v0';\n");
      for (let i = 0; i < 5; i++) writeFileSync(savedFile(i), `export const saved${i} = 0;\n`);
      const stats = await vscode.commands.executeCommand<{ files: number }>('modelGateway.search.build');
      assert.ok(stats && stats.files > 0, 'the index was built');
    }
    const { testing } = await api();
    await testing.chat.setMode('agent');
    // The reloaded window loads the index the first half built.
    if (!testing.search.ready()) await testing.search.load();
    await until('the index is ready', () => testing.search.ready(), 60_000);
    await until('the MCP server runs', () => testing.mcp.get('soak')?.state.kind === 'running', 60_000);
  }

  /** A burst of saves to the index's files, then the update that follows them. */
  async function saves(n: number, from: number, o: Outcomes): Promise<void> {
    const { testing } = await api();
    for (let i = from; i < from + n; i += 5) {
      const previous = testing.search.lastStats;
      for (let j = i; j < Math.min(from + n, i + 5); j++) {
        const document = await vscode.workspace.openTextDocument(savedFile(j));
        const edit = new vscode.WorkspaceEdit();
        edit.replace(document.uri, document.lineAt(0).range, `export const saved${j % 5} = ${j}; // ${'x'.repeat(j % 40)}`);
        await vscode.workspace.applyEdit(edit);
        assert.ok(await document.save(), 'saved');
        o.saves++;
      }
      await until('the index follows the saves', () => testing.search.lastStats !== previous, 30_000);
      o.indexUpdates++;
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  }

  /** The edit file's flag now (`v3` → 3): edits of a failed turn did not happen, so read, not counted. */
  const flagNow = () => Number(/'v(\d+)'/.exec(readFileSync(editFile(), 'utf8'))![1]);

  /** One turn of the day; which kind by its number. */
  async function dayTurn(t: number, o: Outcomes): Promise<AssistantTurn> {
    const kind = t % 6;
    let answer: AssistantTurn;
    if (kind === 0) {
      answer = await turn(`Read the file src/greet.ts and say what it does (${t})`);
      if (answer.steps.some((s) => s.toolCalls.some((c) => c.name === 'read_file' && c.status === 'done'))) o.reads++;
    } else if (kind === 1 || kind === 2) {
      const flag = flagNow();
      const accept = kind === 1;
      answer = await turn(`Use replace_in_file: "'v${flag}'" becomes "'v${flag + 1}'" in soak-lab/edit.ts`, (a) => (a.kind === 'edit' ? accept : true));
      const call = answer.steps.flatMap((s) => s.toolCalls).find((c) => c.name === 'replace_in_file');
      if (call?.status === 'done' && accept) o.editsAccepted++;
      if (call?.status === 'rejected' && !accept) o.editsRejected++;
      assert.equal(flagNow(), accept && call?.status === 'done' ? flag + 1 : flag, `the edit file follows the decision (turn ${t})`);
    } else if (kind === 3) {
      answer = await turn(`Run \`echo soak-${t}\` please`);
      if (answer.steps.some((s) => s.toolCalls.some((c) => c.name === 'run_command' && c.status === 'done'))) o.commands++;
    } else {
      answer = await turn(`Say something short about step ${t} #words=${40 + (t % 5) * 30}`);
    }
    if (answer.status === 'done') o.answered++;
    else if (answer.status === 'error' && answer.error?.message) {
      o.errorCards++;
      if (answer.steps.some((s) => s.text.length > 0)) o.partialKept++;
    } else o.unended.push(`turn ${t}: ${answer.status}`);
    return answer;
  }

  /** The extension host's numbers and the webview's, as a row of the day's table. */
  async function measure(gc: () => void, t: number, phase: number, baseline?: Row): Promise<Row> {
    await new Promise((r) => setTimeout(r, 2000));
    if (baseline) await childrenSettled(baseline.sample.children);
    const row = { turn: t, phase, sample: await sample(gc), webview: await webviewProbe() };
    // A diagnosis: the extension host's heap at each row, to follow what a half kept (docs/benchmarks.md).
    if (process.env.MG_SOAK_HEAP_SNAPSHOTS) writeHeapSnapshot(join(process.env.MG_SOAK_HEAP_SNAPSHOTS, `half${phase}-turn${t}.heapsnapshot`));
    return row;
  }

  /**
   * A warm-up after each start, faults on: every path the day takes (error cards and retries
   * included), often enough that what loads once and the allocators' high-water mark are in the
   * baseline. With 12 turns and no faults, VS Code 1.100.3's RSS still rose 14% in the first 50
   * turns of the day and then stayed flat (heap +0.9%); the short soak needed 20 turns too.
   *
   * Each half asks its own questions (turns 1000… and 1300…: the same kinds, the same lengths). The
   * same question opening a new conversation is the same request byte for byte (the system prompt
   * changes by the day only, the emulator's answers follow the prompt), which the count of requests
   * answered twice would take for one sent again: with one warm-up for both halves, six were.
   */
  async function warmUp(o: Outcomes, phase: number): Promise<void> {
    const { testing } = await api();
    await testing.chat.newConversation();
    let first = '';
    for (let t = 0; t < 24; t++) {
      if (t === 12) await testing.chat.newConversation();
      if (t === 18) assert.ok(await testing.chat.open(first), 'the warm-up switches back');
      await dayTurn(1000 + 300 * (phase - 1) + t, o);
      // A conversation exists once its first message is sent.
      first ||= testing.chat.current!.id;
    }
    await completions(completionFile(), 150, 900_000);
    await restartMcp('soak');
    await restartMcp('soak');
    await saves(20, 10_000, o);
    await testing.usage.reload();
  }

  const emptyOutcomes = (): Outcomes => ({
    answered: 0,
    errorCards: 0,
    partialKept: 0,
    unended: [],
    reads: 0,
    editsAccepted: 0,
    editsRejected: 0,
    commands: 0,
    completionsAnswered: 0,
    completionsAsked: 0,
    kills: 0,
    saves: 0,
    indexUpdates: 0,
    refreshes: 0,
    switches: 0,
  });

  async function faultsOn(): Promise<void> {
    for (const path of ['/v1/chat/completions', '/v1/completions', '/v1/fim/completions']) {
      await emulatorControl('faults', { path, chance: 0.015, fault: { kind: 'status', status: 429, retryAfter: '1' } });
      await emulatorControl('faults', { path, chance: 0.015, fault: { kind: 'status', status: 500, message: 'upstream failed (soak)' } });
    }
    await emulatorControl('faults', { path: '/v1/chat/completions', chance: 0.012, fault: { kind: 'cut', afterEvents: 3 } });
    await emulatorControl('faults', { path: '/v1/chat/completions', chance: 0.008, fault: { kind: 'slowFirstByte', ms: 30_000 } });
  }

  it('300 turns, 2,000 completions, 50 MCP kills, 500 saves, 30 Usage refreshes, 20 switches, a reload halfway, 5% faults', async () => {
    const { testing } = await api();
    const gc = collector();
    const state: State = existsSync(stateFile())
      ? (JSON.parse(readFileSync(stateFile(), 'utf8')) as State)
      : { phase: 1, rows: [], baselines: [], outcomes: emptyOutcomes(), conversations: {}, flag: 0 };
    const o = state.outcomes;
    // This half's chat requests, by body hash: which surface sent a request answered twice.
    const requests = chatRequestLog();
    const previous = state.requests ?? {};
    for (const [hash, list] of Object.entries(previous)) requests.sent.set(hash, list);
    await prepare(state.phase === 1);
    if (state.phase === 2) {
      // The reload kept every conversation with its turns.
      for (const [id, turns] of Object.entries(state.conversations)) {
        assert.ok(await testing.chat.open(id), `conversation ${id} opens after the reload`);
        assert.equal(testing.chat.current!.turns.length, turns, `conversation ${id} kept its ${turns} turns`);
      }
    }
    // Warm-up (faults on, as for the day), then the baseline of this half.
    await emulatorControl('faults', { clear: true });
    await faultsOn();
    await warmUp(emptyOutcomes(), state.phase);
    const conversations: string[] = [...Object.keys(state.conversations), testing.chat.current!.id];
    const baseline = await measure(gc, state.phase === 1 ? 0 : TURNS / 2, state.phase);
    state.baselines.push(baseline.sample);
    state.rows.push(baseline);
    const half = WINDOWS / 2;
    for (let w = (state.phase - 1) * half; w < state.phase * half; w++) {
      const turnsHere = TURNS / WINDOWS;
      const kills = share(TOTALS.kills, w);
      const completionCount = share(TOTALS.completions, w);
      const saveCount = share(TOTALS.saves, w);
      const refreshes = share(TOTALS.refreshes, w);
      const switches = share(TOTALS.switches, w);
      for (let i = 0; i < turnsHere; i++) {
        const t = w * turnsHere + i;
        // A new conversation every ten turns, and now and then back to an earlier one.
        if (i % 10 === 0) {
          await testing.chat.newConversation();
        } else if (i % 10 === 5 && Math.floor(i / 10) < switches && conversations.length > 1) {
          const id = conversations[(t * 7) % conversations.length];
          assert.ok(await testing.chat.open(id), 'an earlier conversation opens');
          o.switches++;
        }
        await dayTurn(t, o);
        const id = testing.chat.current!.id;
        if (!conversations.includes(id)) conversations.push(id);
        if (kills > 0 && i % Math.ceil(turnsHere / kills) === 0 && o.kills < TOTALS.kills) {
          await restartMcp('soak');
          o.kills++;
        }
        if (i % 10 === 9) {
          const block = Math.floor(i / 10);
          const blocks = turnsHere / 10;
          const part = (total: number) => Math.floor((total * (block + 1)) / blocks) - Math.floor((total * block) / blocks);
          const c = part(completionCount);
          const done = await completions(completionFile(), c, t * 1000);
          o.completionsAnswered += done.answered;
          o.completionsAsked += c;
          await saves(part(saveCount), t * 100, o);
          if (Math.floor(i / 10) < refreshes) {
            await testing.usage.reload();
            o.refreshes++;
          }
        }
      }
      state.rows.push(await measure(gc, (w + 1) * turnsHere, state.phase, baseline));
    }

    if (state.phase === 1) {
      // Halfway: what the reloaded window must show, then the reload.
      for (const id of conversations) {
        assert.ok(await testing.chat.open(id));
        state.conversations[id] = testing.chat.current!.turns.length;
      }
      state.phase = 2;
      requests.stop();
      state.requests = Object.fromEntries(requests.sent);
      writeFileSync(stateFile(), JSON.stringify(state));
      (globalThis as { __modelGatewayReload?: boolean }).__modelGatewayReload = true;
      return;
    }

    // The day is over: faults off, and the gateway's and the Usage view's books.
    await emulatorControl('faults', { clear: true });
    const billing = (await emulatorControl('billing', {})) as { calls: number; quota: number; promptTokens: number; completionTokens: number };
    const usageView = (await testing.usage.reload()) as UsageReport;
    const answered = ((await emulatorControl('answered', { path: '/v1/chat/completions' })) as { requests: { status: number; bodyHash: string }[] }).requests;
    const seen = new Set<string>();
    let paidTwice = 0;
    const twice: string[] = [];
    for (const r of answered.filter((x) => x.status === 200)) {
      if (seen.has(r.bodyHash)) {
        paidTwice++;
        twice.push(describeTwice(r.bodyHash, requests.sent.get(r.bodyHash)));
      }
      seen.add(r.bodyHash);
    }
    requests.stop();
    const faulted = answered.filter((x) => x.status !== 200).length;
    rmSync(stateFile(), { force: true });

    const lines: string[] = [];
    lines.push(
      '  turn  half    heap MB   RSS MB  malloc MB  other anon MB  external MB  handles  listeners  files  terminals  children  webview elements  renderer heap MB  turns drawn',
    );
    for (const r of state.rows) {
      lines.push(
        `  ${String(r.turn).padStart(4)}  ${String(r.phase).padStart(4)}  ${r.sample.heapMB.toFixed(1).padStart(9)} ${r.sample.rssMB.toFixed(1).padStart(8)} ${((r.sample.mapped?.brkMB ?? 0) + (r.sample.mapped?.arenasMB ?? 0)).toFixed(1).padStart(10)} ${(r.sample.mapped?.anonymousMB ?? 0).toFixed(1).padStart(14)} ${r.sample.externalMB.toFixed(1).padStart(12)} ${String(handleCount(r.sample.handles)).padStart(8)} ${String(listenerTotal(r.sample)).padStart(10)} ${String(r.sample.openFiles).padStart(6)} ${String(r.sample.terminals).padStart(10)} ${String(r.sample.children).padStart(9)} ${String(r.webview.nodes).padStart(17)} ${r.webview.jsHeapMB.toFixed(1).padStart(16)} ${String(r.webview.turnsDrawn).padStart(12)}`,
      );
    }
    const report = [`  the day, measured every ${TURNS / WINDOWS} turns after a forced collection:`, ...lines];
    if (twice.length) report.push(`  chat requests answered twice (${twice.length}):`, ...twice.map((t) => `    ${t}`));
    const m = metrics();
    const halves = [1, 2].map((phase) => {
      const rows = state.rows.filter((r) => r.phase === phase);
      const first = rows[0].sample;
      const last = rows.at(-1)!.sample;
      return {
        phase,
        first,
        last,
        heapPct: ((last.heapMB - first.heapMB) / first.heapMB) * 100,
        rssPct: ((last.rssMB - first.rssMB) / first.rssMB) * 100,
        table: sampleTable(first, last),
      };
    });
    for (const h of halves) {
      report.push(
        `  half ${h.phase}, from its baseline to its end:`,
        ...h.table.map(([k, b, a]) => `    ${String(k).padEnd(28)} ${String(b).padStart(8)} → ${String(a).padStart(8)}`),
        `    open files new since the baseline: ${openedSince(h.first, h.last).join(', ') || 'none'}`,
      );
      m[`soakHalf${h.phase}HeapGrowthPct`] = h.heapPct;
      m[`soakHalf${h.phase}RssGrowthPct`] = h.rssPct;
    }
    (globalThis as { __modelGatewayReport?: string }).__modelGatewayReport = report.join('\n');
    const nodes = state.rows.map((r) => r.webview.nodes);
    Object.assign(m, {
      soakTurns: o.answered + o.errorCards + o.unended.length,
      soakAnswered: o.answered,
      soakErrorCards: o.errorCards,
      soakPartialKept: o.partialKept,
      soakUnended: o.unended.length,
      soakReads: o.reads,
      soakEditsAccepted: o.editsAccepted,
      soakEditsRejected: o.editsRejected,
      soakCommands: o.commands,
      soakCompletionsAsked: o.completionsAsked,
      soakCompletionsAnswered: o.completionsAnswered,
      soakKills: o.kills,
      soakSaves: o.saves,
      soakIndexUpdates: o.indexUpdates,
      soakRefreshes: o.refreshes,
      soakSwitches: o.switches,
      soakFaultedAnswers: faulted,
      soakPaidTwice: paidTwice,
      soakBilledCalls: billing.calls,
      soakUsageViewRequests: usageView.requests,
      soakBilledDollars: billing.quota / 500_000,
      soakUsageViewDollars: usageView.totalDollars,
      soakWebviewNodesFirst: nodes[0],
      soakWebviewNodesMax: Math.max(...nodes),
    });
    assert.deepEqual(o.unended, [], 'every turn ends with an answer or an error card');
    assert.equal(o.answered + o.errorCards, TURNS, 'every turn of the day ran');
    assert.equal(o.completionsAsked, TOTALS.completions, 'every completion of the day was asked for');
    assert.equal(o.saves, TOTALS.saves, 'every save of the day was made');
    assert.equal(o.kills, TOTALS.kills, 'every MCP kill of the day was made');
    assert.equal(paidTwice, 0, 'no chat request was sent again after its answer began');
    assert.equal(usageView.requests, billing.calls, 'the Usage view counts every call the gateway billed');
    assert.ok(
      Math.abs(usageView.totalDollars - billing.quota / 500_000) < 1e-6,
      `the Usage view’s total ${usageView.totalDollars} is what the gateway billed, ${billing.quota / 500_000}`,
    );
    for (const h of halves) {
      assert.ok(h.heapPct <= 10, `half ${h.phase}: heap ${h.first.heapMB.toFixed(1)} → ${h.last.heapMB.toFixed(1)} MB`);
      assert.ok(h.rssPct <= 10, `half ${h.phase}: RSS ${h.first.rssMB.toFixed(1)} → ${h.last.rssMB.toFixed(1)} MB`);
      assert.equal(
        h.last.terminals,
        h.first.terminals,
        `half ${h.phase}: terminals ${JSON.stringify(h.first.terminalNames ?? [])} → ${JSON.stringify(h.last.terminalNames ?? [])}`,
      );
      assert.ok(
        listenerTotal(h.last) <= listenerTotal(h.first),
        `half ${h.phase}: listeners on our events ${JSON.stringify(h.first.listeners)} → ${JSON.stringify(h.last.listeners)}`,
      );
      assert.equal(h.last.children, h.first.children, `half ${h.phase}: child processes ${h.first.childNames.join(', ')} → ${h.last.childNames.join(', ')}`);
      for (const r of state.rows.filter((x) => x.phase === h.phase))
        assert.ok(
          indexGenerations(r.sample).length <= 1,
          `turn ${r.turn}: the index has files of one generation open at most (${r.sample.indexFiles.join(', ')})`,
        );
      assert.ok(
        h.last.openFiles <= h.first.openFiles + 2,
        `half ${h.phase}: open files ${h.first.openFiles} → ${h.last.openFiles} (new: ${openedSince(h.first, h.last).join(', ')})`,
      );
      assert.ok(
        handleCount(h.last.handles) <= handleCount(h.first.handles) + 2,
        `half ${h.phase}: handles ${JSON.stringify(h.first.handles)} → ${JSON.stringify(h.last.handles)}`,
      );
    }
    assert.ok(
      nodes.every((n) => n > 0),
      'the webview was read at every row',
    );
  });

  after(async () => {
    if ((globalThis as { __modelGatewayReload?: boolean }).__modelGatewayReload) return;
    for (const key of ['defaultModels.chat', 'defaultModels.completion', 'defaultModels.embeddings', 'mcp.servers'])
      await settings().update(key, undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    rmSync(lab(), { recursive: true, force: true });
  });
});
