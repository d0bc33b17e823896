/**
 * What every end-to-end suite starts in `before` and ends in `after`: the gateway emulator,
 * code-server on a sample workspace, and headless Chromium at its workbench.
 *
 * Which files a pass runs (scripts/suite-scope.cjs, docs/testing.md): every file on the newest VS
 * Code; a file whose first lines say `// @vscode-specific: why` (it goes through the workbench's
 * own parts that changed since 1.100: webviews and their focus, the pickers, the walkthrough,
 * views and reload, the packaged extension's install) runs on the oldest too.
 */
import { rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { GatewayEmulator } from '../emulator/server';
import { launchBrowser, openWorkbench, sampleWorkspace, startCodeServer, type CodeServer, type StartOptions } from '../vscode/harness';

export interface Workbench {
  emu: GatewayEmulator;
  server: CodeServer;
  browser: Browser;
  page: Page;
  workspace: string;
  /** Closes the browser, stops code-server and the emulator, and removes the workspace. */
  close(): Promise<void>;
}

/** The demo account's credentials as environment variables, for a suite that starts signed in. */
export function demoCredentials(emu: GatewayEmulator, o: { accessToken?: boolean } = {}): Record<string, string> {
  return {
    MODEL_GATEWAY_BASE_URL: emu.url,
    MODEL_GATEWAY_API_KEY: GatewayEmulator.demoKey,
    ...(o.accessToken ? { MODEL_GATEWAY_ACCESS_TOKEN: GatewayEmulator.demoAccessToken, MODEL_GATEWAY_USER_ID: String(GatewayEmulator.demoUserId) } : {}),
  };
}

export async function startWorkbench(o: {
  emulator?: Parameters<typeof GatewayEmulator.start>[0];
  /** Files to add to the sample workspace before the window opens. */
  prepare?: (workspace: string) => void;
  /** code-server's options, given the running emulator (environment, user settings, Restricted Mode). */
  codeServer: (emu: GatewayEmulator) => Omit<StartOptions, 'workspace'>;
}): Promise<Workbench> {
  const emu = await GatewayEmulator.start(o.emulator);
  const workspace = sampleWorkspace();
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await server?.stop();
    await emu.close();
    rmSync(workspace, { recursive: true, force: true, maxRetries: 3 });
  };
  try {
    o.prepare?.(workspace);
    server = await startCodeServer({ ...o.codeServer(emu), workspace });
    browser = await launchBrowser();
    const page = await openWorkbench(browser, server);
    return { emu, server, browser, page, workspace, close };
  } catch (err) {
    await close();
    throw err;
  }
}
