/**
 * The integration suite's entry, in the shape @vscode/test-electron expects (`run()`), so the same
 * suite runs in code-server here and in desktop VS Code wherever it can be downloaded.
 */
import { join } from 'node:path';
import { readdirSync } from 'node:fs';
import Mocha from 'mocha';

export interface TestResult {
  title: string;
  state: 'passed' | 'failed' | 'pending';
  durationMs?: number;
  error?: string;
}

export function run(): Promise<{
  passed: number;
  failed: number;
  pending: number;
  tests: TestResult[];
  metrics: Record<string, number>;
  report?: string;
  reload?: boolean;
  fileMs: Record<string, number>;
}> {
  const mocha = new Mocha({
    ui: 'bdd',
    timeout: 60_000,
    color: false,
    forbidOnly: true,
    reporter: 'dot',
    ...(process.env.MOCHA_GREP ? { grep: process.env.MOCHA_GREP } : {}),
  });
  for (const f of readdirSync(__dirname)
    .filter((f) => f.endsWith('.test.js'))
    .sort())
    mocha.addFile(join(__dirname, f));
  const tests: TestResult[] = [];
  // Each file's time, hooks included (its top-level suites from start to end), for `npm test`'s table.
  const fileMs: Record<string, number> = {};
  const started = new Map<Mocha.Suite, number>();
  return new Promise((resolve, reject) => {
    const runner = mocha.run(() => {
      const metrics = (globalThis as { __modelGatewayMetrics?: Record<string, number> }).__modelGatewayMetrics ?? {};
      // A run may ask the launcher to reload the window and run again (the soak bench, halfway).
      const reload = (globalThis as { __modelGatewayReload?: boolean }).__modelGatewayReload === true;
      // Text a benchmark prints (a table): the extension host's console is not the launcher's.
      const report = (globalThis as { __modelGatewayReport?: string }).__modelGatewayReport;
      const result = {
        passed: runner.stats?.passes ?? 0,
        failed: runner.stats?.failures ?? 0,
        pending: runner.stats?.pending ?? 0,
        tests,
        metrics,
        report,
        reload,
        fileMs,
      };
      // Under @vscode/test-electron a failing run must reject; the code-server runner reads the object.
      if (result.failed > 0 && process.env.MG_TEST_CONFIG) reject(new Error(`${result.failed} integration tests failed`));
      else resolve(result);
    });
    runner.on('pass', (t) => tests.push({ title: t.fullTitle(), state: 'passed', durationMs: t.duration }));
    runner.on('fail', (t, err) => tests.push({ title: t.fullTitle(), state: 'failed', error: String((err as Error)?.stack ?? err) }));
    runner.on('pending', (t) => tests.push({ title: t.fullTitle(), state: 'pending' }));
    runner.on('suite', (suite) => {
      if (suite.file && suite.parent?.root) started.set(suite, Date.now());
    });
    runner.on('suite end', (suite) => {
      const t = started.get(suite);
      const name = suite.file?.replace(/^.*[\\/]/, '').replace(/\.js$/, '.ts');
      if (t !== undefined && name) fileMs[name] = (fileMs[name] ?? 0) + Date.now() - t;
    });
  });
}
