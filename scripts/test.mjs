// `npm test`: type-check, build, then every suite. Stops at the first failing step.
import { spawnSync } from 'node:child_process';

const steps = [
  ['typecheck', 'npx', ['tsc', '-p', '.', '--noEmit']],
  ['build', 'node', ['esbuild.js']],
  ['unit', 'node', ['scripts/run-mocha.cjs', 'test/unit', 'unit']],
];

for (const [name, cmd, args] of steps) {
  console.log(`\n== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`\n${name} failed (exit ${r.status ?? r.signal}).`);
    process.exit(r.status || 1);
  }
}
