/**
 * `npm run bench -- soak`: the working day of `bench/inhost/soak.test.ts` in a real VS Code
 * (code-server, the emulator with faults on, a reload halfway), run by the integration launcher.
 * Its table (every 50 turns) and figures come back as the launcher prints them.
 */
import { runInHost } from './agent';

export interface SoakBenchResult {
  vscode: string;
  passed: boolean;
  /** The table and the halves' comparisons, as the in-host test printed them. */
  report: string;
  metrics: Record<string, number>;
  failure?: string;
}

export function runSoakBench(): SoakBenchResult {
  const { ok, out } = runInHost('soak', 6_000_000);
  const metrics: Record<string, number> = {};
  for (const m of out.matchAll(/metric (\w+): (-?[\d.]+)/g)) metrics[m[1]] = Number(m[2]);
  const start = out.indexOf('  the day, measured every');
  const end = out.search(/\n\s+[✔✘] no credential/);
  return {
    vscode: /VS Code ([\d.]+)\)/.exec(out)?.[1] ?? '?',
    passed: ok,
    report: start >= 0 ? out.slice(start, end > start ? end : undefined).trimEnd() : '',
    metrics,
    ...(ok ? {} : { failure: out.slice(-3000) }),
  };
}
