import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { AssistantTurn, ToolCallRecord } from '../../src/common/conversation';
import { api, connectToEmulator } from '../../test/integration/helpers';

/**
 * `npm run bench -- problems-cold`, one cold start of many: the first edit in a fresh window, before
 * any TypeScript file was opened (tsserver not started), breaks `src/math.ts` of the sample
 * workspace (no tsconfig.json: an inferred project). Edits run unasked, so nothing warms the server
 * while a person reads the diff: the hardest case. Records whether the first report named the
 * error, said "not checked" (and then whether the late report named it), or wrongly said clean.
 */
describe('bench: problems after the first edit in a cold window', function () {
  this.timeout(180_000);

  before(async () => {
    await connectToEmulator();
    await vscode.workspace.getConfiguration('modelGateway.agent').update('autoApprove', { edits: true }, vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await vscode.workspace.getConfiguration('modelGateway.agent').update('autoApprove', undefined, vscode.ConfigurationTarget.Global);
  });

  it('the first breaking edit', async () => {
    const metrics = ((globalThis as { __modelGatewayMetrics?: Record<string, number> }).__modelGatewayMetrics ??= {});
    // The TypeScript extension may be active already (it starts for a jsonc file); tsserver starts with the first TypeScript document.
    metrics.coldTsserversBefore = tsservers();
    metrics.coldTsDocumentsBefore = vscode.workspace.textDocuments.filter((d) => d.languageId === 'typescript').length;
    const { testing } = await api();
    await testing.chat.newConversation();
    const firstEdit = (): ToolCallRecord | undefined =>
      (testing.chat.current?.turns.at(-1) as AssistantTurn | undefined)?.steps.flatMap((s) => s.toolCalls).find((c) => c.name === 'replace_in_file');
    const started = performance.now();
    let firstReportMs = NaN;
    let knownMs = NaN;
    let sending = true;
    const watching = (async () => {
      for (;;) {
        const p = firstEdit()?.problems;
        if (p && !Number.isFinite(firstReportMs)) firstReportMs = performance.now() - started;
        if (p && p.settled !== 'timeout') {
          knownMs = performance.now() - started;
          return;
        }
        // A late report may come after the turn ended: up to a minute more.
        if (!sending && performance.now() - started > 60_000) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const first = testing.chat.send('Use replace_in_file: "a + b" becomes "a + c" in src/math.ts', [], []);
    await first;
    const call = firstEdit();
    const initial = call?.problems ? { ...call.problems } : undefined;
    sending = false;
    await watching;
    assert.ok(call && initial, `the edit ran and reported: ${call?.result ?? 'no call'}`);
    const said = (p: NonNullable<ToolCallRecord['problems']>) =>
      p.settled === 'timeout' ? 'unchecked' : p.introduced.some((x) => /Cannot find name 'c'/.test(x.message)) ? 'error' : 'clean';
    metrics.coldFirstSaid = { error: 1, unchecked: 2, clean: 3 }[said(initial)];
    metrics.coldFinalSaid = { error: 1, unchecked: 2, clean: 3 }[said(call.problems!)];
    metrics.coldWriteToReportMs = initial.waitedMs;
    metrics.coldQuestionToFirstReportMs = firstReportMs;
    metrics.coldQuestionToKnownMs = knownMs;
    metrics.coldLateMs = call.problems?.lateMs ?? -1;
  });
});

/** tsserver processes running on this machine now (the bench runs one window at a time). */
function tsservers(): number {
  let n = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (/tsserver\.js/.test(readFileSync(`/proc/${pid}/cmdline`, 'latin1'))) n++;
    } catch {
      // A process that ended meanwhile.
    }
  }
  return n;
}
