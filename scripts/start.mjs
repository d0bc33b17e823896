// `npm start`: see scripts/demo.ts (TypeScript, run through tsx).
import { spawn } from 'node:child_process';

const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], { stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code) => process.exit(code ?? 0));
