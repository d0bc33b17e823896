// Runs mocha suites written in TypeScript (via tsx) and ends with a plain "N passed, N failed"
// line, which CI reads. Usage: node scripts/run-mocha.cjs <folder> [label]
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');

// Every temporary file the suites make goes under one folder of this run, removed at the end:
// a failing test (or one that forgets to clean up) leaves nothing behind in /tmp.
const runTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-run-'));
process.env.TMPDIR = runTmp;
process.on('exit', () => fs.rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 }));

require('tsx/cjs/api').register();
const Mocha = require('mocha');

const folder = process.argv[2] ?? 'test/unit';
const label = process.argv[3] ?? path.basename(folder);
const grep = process.env.MOCHA_GREP;

function collect(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return collect(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

// Which files this pass runs: scripts/suite-scope.cjs (the markers @vscode-specific and
// @profile-dependent). `--per-vscode`: the suite runs in a VS Code (`MODEL_GATEWAY_VSCODE`).
const { inScope } = require('./suite-scope.cjs');
const perVsCode = process.argv.includes('--per-vscode');
const pass = {
  profile: process.env.MODEL_GATEWAY_EMULATOR_PROFILE === 'one-api' ? 'one-api' : 'new-api',
  vscode: perVsCode ? (process.env.MODEL_GATEWAY_VSCODE === 'newest' ? 'newest' : 'oldest') : undefined,
};
const mocha = new Mocha({ timeout: 30_000, reporter: 'spec', forbidOnly: true, ...(grep ? { grep } : {}) });
const files = collect(folder).sort();
const chosen = files.filter((f) => inScope(f, pass));
for (const f of chosen) mocha.addFile(path.resolve(f));
const left = files.length - chosen.length;
if (left)
  console.log(
    `${chosen.length} of ${files.length} files run in this pass (${pass.profile}${pass.vscode ? `, VS Code ${pass.vscode}` : ''}); the other ${left} hold nothing this pass could change (scripts/suite-scope.cjs)`,
  );
// Each file's time, hooks included (its top-level suites from start to end), for `npm test`'s table.
const fileMs = new Map();
const started = new Map();
const runner = mocha.run((failures) => {
  const timings = process.env.MG_TIMINGS_FILE;
  if (timings)
    fs.appendFileSync(timings, [...fileMs].map(([file, ms]) => JSON.stringify({ step: label, file: path.relative(process.cwd(), file), ms }) + '\n').join(''));
  const s = runner.stats;
  const skipped = s.pending ? `, ${s.pending} skipped` : '';
  console.log(`${label}: ${s.passes} passed, ${s.failures} failed${skipped}`);
  process.exitCode = failures > 0 || s.passes === 0 ? 1 : 0;
});
runner.on('suite', (suite) => {
  if (suite.file && suite.parent?.root) started.set(suite, Date.now());
});
runner.on('suite end', (suite) => {
  const t = started.get(suite);
  if (t !== undefined) fileMs.set(suite.file, (fileMs.get(suite.file) ?? 0) + Date.now() - t);
});
