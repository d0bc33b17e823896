/**
 * `npm start`: VS Code for the Web (the newest tested: 1.139.1; MODEL_GATEWAY_VSCODE=oldest for
 * 1.100.3) on 127.0.0.1 with Model Gateway installed and a small sample
 * workspace, wired to the built-in gateway emulator, or to MODEL_GATEWAY_BASE_URL (and
 * MODEL_GATEWAY_API_KEY, MODEL_GATEWAY_ACCESS_TOKEN) when those are set.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { GatewayEmulator } from '../test/emulator/server';
import { startPgliteServer, type PgliteServer } from '../test/fixtures/pgliteServer';
import { ROOT, sampleWorkspace, startCodeServer } from '../test/vscode/harness';

async function main(): Promise<void> {
  const build = spawnSync(process.execPath, ['esbuild.js'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);

  let emulator: GatewayEmulator | undefined;
  let teamStore: PgliteServer | undefined;
  const env: Record<string, string> = {};
  const settings: Record<string, unknown> = {};
  if (process.env.MODEL_GATEWAY_BASE_URL) {
    console.log(`Using the gateway at ${process.env.MODEL_GATEWAY_BASE_URL}`);
    if (!process.env.MODEL_GATEWAY_API_KEY) console.log('No MODEL_GATEWAY_API_KEY is set: set the key from the Model Gateway view.');
  } else {
    emulator = await GatewayEmulator.start({ port: Number(process.env.EMULATOR_PORT ?? 8787), historyDays: 14 });
    env.MODEL_GATEWAY_BASE_URL = emulator.url;
    env.MODEL_GATEWAY_API_KEY = GatewayEmulator.demoKey;
    env.MODEL_GATEWAY_ACCESS_TOKEN = GatewayEmulator.demoAccessToken;
    env.MODEL_GATEWAY_USER_ID = String(GatewayEmulator.demoUserId);
    console.log(`Gateway emulator: ${emulator.url}, behaving like ${emulator.profile} (MODEL_GATEWAY_EMULATOR_PROFILE=one-api for one-api)`);
    console.log(`Demo key, access token and user id ${GatewayEmulator.demoUserId} (New-Api-User) passed to VS Code`);
    // The emulator's code model, so ghost text shows while typing (a real gateway's model is the user's choice).
    settings['modelGateway.defaultModels.completion'] = 'codestral-emu';
    // A team store for semantic search: a real Postgres with pgvector (PGlite) on loopback.
    teamStore = await startPgliteServer({ port: Number(process.env.TEAM_STORE_PORT ?? 0) });
    settings['modelGateway.search.teamStore'] = teamStore.url;
    console.log(`Team store (PostgreSQL with pgvector, PGlite): ${teamStore.url}`);
  }
  // VS Code's own Chat view without a GitHub sign-in (this throwaway profile only): its model
  // picker then offers the gateway's models.
  settings['chat.allowAnonymousAccess'] = true;
  const workspace = sampleWorkspace();
  // Today's VS Code unless MODEL_GATEWAY_VSCODE=oldest: its chat lists the gateway's models too.
  const server = await startCodeServer({
    workspace,
    env,
    settings,
    port: Number(process.env.PORT ?? 8080),
    vscode: process.env.MODEL_GATEWAY_VSCODE === 'oldest' ? 'oldest' : 'newest',
  });
  console.log(
    `\nVS Code ${server.vscode} for the Web with Model Gateway:\n\n  ${server.url}/?folder=${encodeURIComponent(workspace)}\n\nOpen it in a browser; the Model Gateway icon is in the activity bar${server.vscode.startsWith('1.100') ? '' : ", and VS Code's own Chat view offers the gateway's models"}. Ctrl+C stops everything.`,
  );
  const stop = async () => {
    await server.stop();
    await emulator?.close();
    await teamStore?.stop();
    rmSync(workspace, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  server.process.once('exit', () => {
    rmSync(workspace, { recursive: true, force: true });
    void emulator?.close().then(() => process.exit(1));
  });
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
