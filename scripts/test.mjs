// `npm test`: type-check, lint, build, then every suite: unit (Node, against the emulator), integration
// (inside a real VS Code: code-server, the oldest supported and the newest), end to end (headless
// Chromium driving it, on both). Stops at
// the first failing step; ends with a total line "total: N passed, N failed".
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { VSCODE_VERSIONS } from './setup-code-server.mjs';

const OLDEST = { MODEL_GATEWAY_VSCODE: 'oldest' };
const NEWEST = { MODEL_GATEWAY_VSCODE: 'newest' };

const steps = [
  ['typecheck', 'npx', ['tsc', '-p', '.', '--noEmit']],
  ['typecheck-webview', 'npx', ['tsc', '-p', 'tsconfig.webview.json']],
  // typescript-eslint's type-checked rules, floating promises and exhaustive switches included.
  ['lint', 'npx', ['eslint', '--max-warnings', '0', '.']],
  ['build', 'node', ['esbuild.js']],
  // Installs both code-servers (and Node 24 for the newest) and the Debian packages once (as
  // root; otherwise prints the command): the unit suite's real PostgreSQL server is one of them.
  ['setup', 'node', ['scripts/setup-code-server.mjs', 'all']],
  // Unit and integration run against the emulator behaving like each real server.
  ['unit', 'node', ['scripts/run-mocha.cjs', 'test/unit', 'unit (new-api)'], { MODEL_GATEWAY_EMULATOR_PROFILE: 'new-api' }],
  ['unit-one-api', 'node', ['scripts/run-mocha.cjs', 'test/unit', 'unit (one-api)'], { MODEL_GATEWAY_EMULATOR_PROFILE: 'one-api' }],
  // In-host suites and end to end on the oldest supported VS Code and on the newest.
  ['integration', 'npx', ['tsx', 'test/integration/launch.ts'], { MODEL_GATEWAY_EMULATOR_PROFILE: 'new-api', ...OLDEST }],
  ['integration-one-api', 'npx', ['tsx', 'test/integration/launch.ts'], { MODEL_GATEWAY_EMULATOR_PROFILE: 'one-api', ...OLDEST }],
  ['integration-newest', 'npx', ['tsx', 'test/integration/launch.ts'], { MODEL_GATEWAY_EMULATOR_PROFILE: 'new-api', ...NEWEST }],
  ['e2e', 'node', ['scripts/run-mocha.cjs', 'test/e2e', `e2e (VS Code ${VSCODE_VERSIONS.oldest.vscode})`], OLDEST],
  ['e2e-newest', 'node', ['scripts/run-mocha.cjs', 'test/e2e', `e2e (VS Code ${VSCODE_VERSIONS.newest.vscode})`], NEWEST],
];

const only = process.env.TEST_STEPS?.split(',');
// What the suites leave in the temp folder (ours start with "mg-"): nothing, checked at the end.
const ours = () => new Set(readdirSync(tmpdir()).filter((n) => n.startsWith('mg-')));
const tempBefore = ours();
let passed = 0;
let failed = 0;

function run(name, cmd, args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
    child.stdout.on('data', (d) => {
      process.stdout.write(d);
      for (const m of d.toString().matchAll(/^\w+(?: \([^)]*\))?: (\d+) passed, (\d+) failed/gm)) {
        passed += Number(m[1]);
        failed += Number(m[2]);
      }
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

for (const [name, cmd, args, env] of steps) {
  if (only && !only.includes(name)) continue;
  console.log(`\n== ${name}: ${cmd} ${args.join(' ')}`);
  const code = await run(name, cmd, args, env);
  if (code !== 0) {
    console.error(`\n${name} failed (exit ${code}).`);
    console.log(`total: ${passed} passed, ${Math.max(failed, 1)} failed`);
    process.exit(code || 1);
  }
}
const leftBehind = [...ours()].filter((n) => !tempBefore.has(n));
console.log(`\n${leftBehind.length ? '✘' : '✔'} the temp folder holds nothing more of ours than at the start${leftBehind.length ? `: ${leftBehind.join(', ')} in ${tmpdir()}` : ''}`);
console.log(`temp-check: ${leftBehind.length ? 0 : 1} passed, ${leftBehind.length ? 1 : 0} failed`);
if (leftBehind.length) failed++;
else passed++;
console.log(`\ntotal: ${passed} passed, ${failed} failed`);
if (leftBehind.length) process.exit(1);
