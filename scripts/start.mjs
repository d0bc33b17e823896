// `npm start`. Today it starts the gateway emulator on loopback and prints its URL and demo key.
// The extension-shell issue turns this into the full demo: VS Code for the Web (code-server) on
// 127.0.0.1 with the extension installed, wired to this emulator or to MODEL_GATEWAY_BASE_URL.
import { spawn } from 'node:child_process';

if (process.env.MODEL_GATEWAY_BASE_URL) {
  console.log(`MODEL_GATEWAY_BASE_URL is set (${process.env.MODEL_GATEWAY_BASE_URL}); the emulator is not needed.`);
  console.log('VS Code for the Web with the extension arrives with the extension-shell issue.');
  process.exit(0);
}

console.log('Starting the gateway emulator (VS Code for the Web arrives with the extension-shell issue)…');
const port = process.env.EMULATOR_PORT ?? '8787';
const child = spawn(process.execPath, ['--import', 'tsx', 'test/emulator/cli.ts', port], { stdio: 'inherit' });
const stop = () => child.kill('SIGTERM');
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
child.on('exit', (code) => process.exit(code ?? 0));
