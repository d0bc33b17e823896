/**
 * The same in-host suite under @vscode/test-electron (desktop VS Code, downloaded by the tool),
 * for machines with internet access: `npm run test:electron`. It cannot run here (no download);
 * `npm test` runs the suite in code-server instead (launch.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTests } from '@vscode/test-electron';
import { GatewayEmulator } from '../emulator/server';
import { startPgliteServer } from '../fixtures/pgliteServer';
import { EXTENSION_ID, ROOT, sampleWorkspace } from '../vscode/harness';
import { buildSuite, SUITE_OUT } from './launch';

async function main(): Promise<void> {
  await buildSuite();
  const emu = await GatewayEmulator.start();
  const teamStore = await startPgliteServer();
  const spare = emu.store.addKey({ userId: 1, name: 'spare', unlimitedQuota: true });
  const configFile = join(mkdtempSync(join(tmpdir(), 'mg-electron-')), 'config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      emulatorUrl: emu.url,
      demoKey: GatewayEmulator.demoKey,
      demoAccessToken: GatewayEmulator.demoAccessToken,
      demoUserId: String(GatewayEmulator.demoUserId),
      profile: emu.profile,
      spareKey: spare.secret,
      extensionId: EXTENSION_ID,
      vscodeVersion: '1.100.3',
      teamStoreUrl: teamStore.url,
      teamStorePassword: 'mg-team-store-password-0451',
    }),
  );
  try {
    await runTests({
      version: '1.100.3',
      extensionDevelopmentPath: ROOT,
      extensionTestsPath: join(SUITE_OUT, 'index.js'),
      launchArgs: [sampleWorkspace(), '--disable-extensions', '--disable-workspace-trust'],
      extensionTestsEnv: { MODEL_GATEWAY_TEST: '1', MG_TEST_CONFIG: configFile },
    });
  } finally {
    await emu.close();
    await teamStore.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
