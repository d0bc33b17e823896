import { readFileSync } from 'node:fs';

export interface TestConfig {
  emulatorUrl: string;
  demoKey: string;
  demoAccessToken: string;
  /** The demo user's id, sent as New-Api-User where the emulator's profile (new-api) wants it. */
  demoUserId: string;
  /** The emulator's server profile for this run. */
  profile: string;
  spareKey: string;
  extensionId: string;
  /**
   * Where the code-server launcher answers VS Code's modal dialogs from (`answers.json`) and
   * records them (`seen.json`). Absent under @vscode/test-electron, where nobody is at the window.
   */
  dialogDir?: string;
  /** The VS Code version the run started (the suite checks it is the one running). */
  vscodeVersion: string;
  /** The team store (PGlite with pgvector over the wire protocol) and the password the suite sets for it. */
  teamStoreUrl: string;
  teamStorePassword: string;
}

// Set by the code-server runner extension, or read from the file @vscode/test-electron's
// launcher names in MG_TEST_CONFIG.
export const config: TestConfig =
  (globalThis as unknown as { __modelGatewayTestConfig?: TestConfig }).__modelGatewayTestConfig ??
  (JSON.parse(readFileSync(process.env.MG_TEST_CONFIG ?? '', 'utf8')) as TestConfig);
