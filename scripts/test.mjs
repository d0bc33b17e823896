// `npm test`: type-check and lint (side by side), build, then every suite: unit (Node, against the
// emulator), integration (inside a real VS Code: code-server), end to end (headless Chromium
// driving it). Each file runs where its behaviour can differ (scripts/suite-scope.cjs): every file
// on the newest VS Code against the new-api profile; the files marked @vscode-specific again on the
// oldest supported VS Code, those marked @profile-dependent again against one-api. Stops at the
// first failing step; ends with each step's time, the slowest files, and "total: N passed, N failed".
// `TEST_STEPS=unit,e2e-newest` runs some steps only.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VSCODE_VERSIONS } from './setup-code-server.mjs';

const OLDEST = { MODEL_GATEWAY_VSCODE: 'oldest' };
const NEWEST = { MODEL_GATEWAY_VSCODE: 'newest' };
const NEW_API = { MODEL_GATEWAY_EMULATOR_PROFILE: 'new-api' };
const ONE_API = { MODEL_GATEWAY_EMULATOR_PROFILE: 'one-api' };
const oldest = VSCODE_VERSIONS.oldest.vscode;
const newest = VSCODE_VERSIONS.newest.vscode;

/** A step: one command, or several run side by side (`together`), each printed whole when it ends. */
const steps = [
  {
    name: 'checks',
    together: [
      ['typecheck', 'npx', ['tsc', '-p', '.', '--noEmit']],
      ['typecheck-webview', 'npx', ['tsc', '-p', 'tsconfig.webview.json']],
      // typescript-eslint's type-checked rules, floating promises and exhaustive switches included.
      ['lint', 'npx', ['eslint', '--max-warnings', '0', '.']],
      // One format for the whole tree (.prettierrc.json): `npm run format` writes it.
      ['format', 'npx', ['prettier', '--check', '.']],
    ],
  },
  { name: 'build', cmd: 'node', args: ['esbuild.js'] },
  // Installs both code-servers (and Node 24 for the newest) and the Debian packages once (as
  // root; otherwise prints the command): the unit suite's real PostgreSQL server is one of them.
  { name: 'setup', cmd: 'node', args: ['scripts/setup-code-server.mjs', 'all'] },
  // One after another: the suites below keep both cores busy (measured 80 to 100%), so running
  // two at once only stretched each (an in-host pass then outran its bound: docs/testing.md).
  { name: 'unit', cmd: 'node', args: ['scripts/run-mocha.cjs', 'test/unit', 'unit (new-api)'], env: NEW_API },
  { name: 'unit-one-api', cmd: 'node', args: ['scripts/run-mocha.cjs', 'test/unit', 'unit (one-api)'], env: ONE_API },
  { name: 'integration-newest', cmd: 'npx', args: ['tsx', 'test/integration/launch.ts'], env: { ...NEW_API, ...NEWEST } },
  { name: 'integration-oldest', cmd: 'npx', args: ['tsx', 'test/integration/launch.ts'], env: { ...NEW_API, ...OLDEST } },
  { name: 'integration-one-api', cmd: 'npx', args: ['tsx', 'test/integration/launch.ts'], env: { ...ONE_API, ...NEWEST } },
  { name: 'e2e-newest', cmd: 'node', args: ['scripts/run-mocha.cjs', 'test/e2e', `e2e (VS Code ${newest})`, '--per-vscode'], env: { ...NEW_API, ...NEWEST } },
  { name: 'e2e-oldest', cmd: 'node', args: ['scripts/run-mocha.cjs', 'test/e2e', `e2e (VS Code ${oldest})`, '--per-vscode'], env: { ...NEW_API, ...OLDEST } },
];

const only = process.env.TEST_STEPS?.split(',');
// What the suites leave in the temp folder (ours start with "mg-"): nothing, checked at the end.
const ours = () => new Set(readdirSync(tmpdir()).filter((n) => n.startsWith('mg-')));
const tempBefore = ours();
// This run's folder (MG_RUN_DIR): each suite appends its files' times here (scripts/run-mocha.cjs,
// test/integration/launch.ts); the packaged .vsix is recorded here once for both e2e passes.
const timingsDir = mkdtempSync(join(tmpdir(), 'model-gateway-timings-'));
const timingsFile = join(timingsDir, 'files.jsonl');
let passed = 0;
let failed = 0;
const stepTimes = [];

function countTotals(text) {
  for (const m of text.matchAll(/^\w+(?: \([^)]*\))?: (\d+) passed, (\d+) failed/gm)) {
    passed += Number(m[1]);
    failed += Number(m[2]);
  }
}

/** Runs one command; its output is streamed, or kept and returned when `quiet`. */
function run(cmd, args, env = {}, quiet = false) {
  return new Promise((resolve) => {
    let kept = '';
    const child = spawn(cmd, args, {
      stdio: ['ignore', 'pipe', quiet ? 'pipe' : 'inherit'],
      env: { ...process.env, MG_TIMINGS_FILE: timingsFile, MG_RUN_DIR: timingsDir, ...env },
    });
    child.stdout.on('data', (d) => {
      if (quiet) kept += d;
      else process.stdout.write(d);
      countTotals(d.toString());
    });
    child.stderr?.on('data', (d) => (kept += d));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output: kept }));
  });
}

const seconds = (ms) => `${(ms / 1000).toFixed(0)} s`;

function summary() {
  const lines = ['\nTime per step:'];
  let total = 0;
  // Steps run side by side are listed each, then their group's wall time (what the total adds).
  const grouped = new Set(steps.flatMap((s) => (s.together ?? []).map(([n]) => n)));
  for (const { name, ms, wall } of stepTimes) {
    if (wall || !grouped.has(name)) total += ms;
    lines.push(`  ${(grouped.has(name) ? `  ${name}` : name).padEnd(24)} ${seconds(ms).padStart(7)}`);
  }
  lines.push(`  ${'all'.padEnd(22)} ${seconds(total).padStart(7)}  (${(total / 60000).toFixed(1)} min; target ≤ 25 min with npm ci: docs/testing.md)`);
  const files = existsSync(timingsFile)
    ? readFileSync(timingsFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
  if (files.length) {
    lines.push('\nThe slowest 20 test files (hooks included):');
    for (const f of files.sort((a, b) => b.ms - a.ms).slice(0, 20)) lines.push(`  ${seconds(f.ms).padStart(6)}  ${f.file}  [${f.step}]`);
  }
  return lines.join('\n');
}

function finish(code) {
  console.log(summary());
  rmSync(timingsDir, { recursive: true, force: true });
  console.log(`\ntotal: ${passed} passed, ${failed} failed`);
  process.exit(code);
}

/** Runs one step, its output kept and printed whole when it ends (several run at once). */
async function runKept(step) {
  const t = Date.now();
  console.log(`   ${step.name} started: ${step.cmd} ${step.args.join(' ')}`);
  const r = await run(step.cmd, step.args, step.env, true);
  const ms = Date.now() - t;
  console.log(`\n-- ${step.name} (${seconds(ms)}, exit ${r.code})`);
  if (r.output.trim()) process.stdout.write(r.output.endsWith('\n') ? r.output : `${r.output}\n`);
  stepTimes.push({ name: step.name, ms });
  return r.code;
}

const wanted = (name, group) => !only || only.includes(name) || only.includes(group);
for (const step of steps) {
  const t0 = Date.now();
  let code = 0;
  if (step.together) {
    const parts = step.together.filter(([name]) => wanted(name, step.name)).map(([name, cmd, args, env]) => ({ name, cmd, args, env }));
    if (!parts.length) continue;
    console.log(`\n== ${step.name}: ${parts.map((p) => p.name).join(', ')}, side by side`);
    for (const c of await Promise.all(parts.map(runKept))) code ||= c;
  } else {
    if (!wanted(step.name)) continue;
    console.log(`\n== ${step.name}: ${step.cmd} ${step.args.join(' ')}`);
    code = (await run(step.cmd, step.args, step.env)).code;
    stepTimes.push({ name: step.name, ms: Date.now() - t0 });
  }
  if (step.together) stepTimes.push({ name: `(${step.name}, wall)`, ms: Date.now() - t0, wall: true });
  if (code !== 0) {
    console.error(`\n${step.name} failed (exit ${code}).`);
    failed = Math.max(failed, 1);
    finish(code || 1);
  }
}
const leftBehind = [...ours()].filter((n) => !tempBefore.has(n));
console.log(
  `\n${leftBehind.length ? '✘' : '✔'} the temp folder holds nothing more of ours than at the start${leftBehind.length ? `: ${leftBehind.join(', ')} in ${tmpdir()}` : ''}`,
);
console.log(`temp-check: ${leftBehind.length ? 0 : 1} passed, ${leftBehind.length ? 1 : 0} failed`);
if (leftBehind.length) failed++;
else passed++;
finish(leftBehind.length ? 1 : 0);
