import { GatewayEmulator } from './server';

// `npm run emulator`: a gateway emulator on loopback for demos and manual tests.
async function main(): Promise<void> {
  const port = Number(process.env.EMULATOR_PORT ?? process.argv[2] ?? 0);
  const emu = await GatewayEmulator.start({ port, host: '127.0.0.1' });
  console.log(`Gateway emulator listening on ${emu.url}`);
  console.log(`Base URL: ${emu.url}/v1`);
  console.log(`Demo API key (emulator only): ${GatewayEmulator.demoKey}`);
  console.log(`Demo system access token (emulator only): ${GatewayEmulator.demoAccessToken}`);
  const stop = () => void emu.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
