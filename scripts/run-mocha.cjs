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

// A file whose behaviour cannot differ between the emulator's profiles says so on a line of its
// own (`// @profile-independent: why`): it runs in the new-api pass, not again in the one-api one.
const profileIndependent = (f) => /^\/\/ @profile-independent\b/m.test(fs.readFileSync(f, 'utf8').slice(0, 4000));
const secondProfile = process.env.MODEL_GATEWAY_EMULATOR_PROFILE === 'one-api';
const mocha = new Mocha({ timeout: 30_000, reporter: 'spec', forbidOnly: true, ...(grep ? { grep } : {}) });
const files = collect(folder).sort();
const once = secondProfile ? files.filter(profileIndependent) : [];
for (const f of files) if (!once.includes(f)) mocha.addFile(path.resolve(f));
if (once.length) console.log(`${once.length} profile-independent file(s) ran in the new-api pass: ${once.map((f) => path.basename(f)).join(', ')}`);
const runner = mocha.run((failures) => {
  const s = runner.stats;
  const skipped = s.pending ? `, ${s.pending} skipped` : '';
  console.log(`${label}: ${s.passes} passed, ${s.failures} failed${skipped}`);
  process.exitCode = failures > 0 || s.passes === 0 ? 1 : 0;
});
