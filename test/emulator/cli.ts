import { isProfile, profileFromEnv, SERVER_PROFILES, type ServerProfile } from './profiles';
import { GatewayEmulator } from './server';

/** `--profile one-api` (or `--profile=one-api`), else MODEL_GATEWAY_EMULATOR_PROFILE, else new-api. */
function profileArg(argv: string[]): ServerProfile {
  const at = argv.findIndex((a) => a === '--profile' || a.startsWith('--profile='));
  if (at === -1) return profileFromEnv();
  const value = argv[at].includes('=') ? argv[at].split('=')[1] : argv[at + 1];
  if (!isProfile(value)) throw new Error(`--profile must be one of ${SERVER_PROFILES.join(', ')}`);
  return value;
}

// `npm run emulator [-- --profile one-api] [port]`: a gateway emulator on loopback for demos and manual tests.
// MODEL_GATEWAY_EMULATOR_BUSY='claude-sonnet-emu=no-channel' starts it with that model busy (docs/emulator.md).
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const positional = argv.filter((a, i) => !a.startsWith('--') && argv[i - 1] !== '--profile');
  const port = Number(process.env.EMULATOR_PORT ?? positional[0] ?? 0);
  const emu = await GatewayEmulator.start({ port, host: '127.0.0.1', profile: profileArg(argv) });
  console.log(`Gateway emulator listening on ${emu.url}, behaving like ${emu.profile}`);
  console.log(`Base URL: ${emu.url}/v1`);
  console.log(`Demo API key (emulator only): ${GatewayEmulator.demoKey}`);
  console.log(`Demo system access token (emulator only): ${GatewayEmulator.demoAccessToken}`);
  console.log(`Demo user id (New-Api-User): ${GatewayEmulator.demoUserId}`);
  console.log(`Switch profile while running: POST ${emu.url}/__emulator/profile {"profile":"one-api"}`);
  // MODEL_GATEWAY_EMULATOR_BUSY (read by GatewayEmulator.start) makes models busy from the start.
  for (const r of emu.faults.list()) {
    const f = r.fault;
    if (r.model)
      console.log(`Busy from the start: ${r.model} (${f.kind === 'busy' ? f.reason : f.kind === 'stall' ? `stall after ${f.afterEvents} events` : f.kind})`);
  }
  console.log(
    `Make a model busy while running: POST ${emu.url}/__emulator/faults {"model":"claude-sonnet-emu","times":null,"fault":{"kind":"busy","reason":"no-channel"}}`,
  );
  console.log(`…and answer again: POST ${emu.url}/__emulator/faults {"clear":true,"model":"claude-sonnet-emu"}`);
  const stop = () => void emu.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
