import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import * as vscode from 'vscode';
import type { ApprovalInfo } from '../../src/common/chatProtocol';
import type { AssistantTurn } from '../../src/common/conversation';
import type { ExtensionApi } from '../../src/extension';
import { config } from './config';

/** The extension's API with its testing internals (MODEL_GATEWAY_TEST=1). */
export async function api(): Promise<Required<ExtensionApi>> {
  const ext = vscode.extensions.getExtension<ExtensionApi>(config.extensionId);
  assert.ok(ext, `extension ${config.extensionId} is installed`);
  const exports = await ext.activate();
  assert.ok(exports.testing, 'MODEL_GATEWAY_TEST=1 reached the extension host');
  return exports as Required<ExtensionApi>;
}

import { until } from '../wait';
export { until };

/**
 * Sends a question and accepts every approval its turn asks for, as a person clicking Accept would;
 * `asked` collects what was asked. Resolves with the turn once it ended.
 */
export async function sendAccepting(text: string, asked: ApprovalInfo[] = []): Promise<AssistantTurn> {
  const { testing } = await api();
  let settled = false;
  const sent = testing.chat.send(text, [], []).finally(() => (settled = true));
  while (!settled) {
    for (const a of testing.chat.pendingApprovals()) {
      asked.push(a);
      testing.chat.decide(a.callId, true);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  await sent;
  return testing.chat.current?.turns.at(-1) as AssistantTurn;
}

/**
 * Runs a command that asks the person something, answering through the test-only API (the
 * commands themselves take no credentials or confirmations from their callers).
 */
export async function runAnswering<T>(command: string, ...answers: (string | boolean | undefined)[]): Promise<T | undefined> {
  const { testing } = await api();
  testing.services.prompts.answerNext(...answers);
  try {
    return await vscode.commands.executeCommand<T>(command);
  } finally {
    // A profile that asks less (one-api needs no user id) leaves answers unused.
    testing.services.prompts.discardAnswers();
  }
}

/**
 * Runs a command; `confirmed: true` in its options stands for the person pressing the price
 * dialog's button (the product takes no such option: a caller cannot skip the question).
 * Answers the command did not ask for (it refused earlier) are dropped afterwards.
 */
export async function runCommand<T>(command: string, ...args: unknown[]): Promise<T | undefined> {
  const { testing } = await api();
  const last = args.at(-1);
  if (last && typeof last === 'object' && 'confirmed' in last) {
    const { confirmed, ...rest } = last as { confirmed: boolean };
    args[args.length - 1] = rest;
    testing.services.prompts.answerNext(confirmed);
  }
  try {
    return await vscode.commands.executeCommand<T>(command, ...args);
  } finally {
    testing.services.prompts.discardAnswers();
  }
}

/** Points the extension at the emulator with the demo key, without going through the dialogs. */
export async function connectToEmulator(): Promise<void> {
  const { testing } = await api();
  await vscode.workspace.getConfiguration('modelGateway').update('baseUrl', config.emulatorUrl, vscode.ConfigurationTarget.Global);
  await testing.services.credentials.setApiKey(config.demoKey, new URL(config.emulatorUrl).origin);
}

/** Request lines (`POST /v1/…`) the emulator has served; its control API never lists headers. */
export async function emulatorRequests(): Promise<string[]> {
  return ((await (await fetch(`${config.emulatorUrl}/__emulator/requests`)).json()) as { paths: string[] }).paths;
}

/** The requests so far: each one's method and path, and its body's top-level field names. */
export async function emulatorRequestFields(): Promise<{ path: string; fields: string[] }[]> {
  const r = (await (await fetch(`${config.emulatorUrl}/__emulator/requests`)).json()) as { paths: string[]; fields: string[][] };
  return r.paths.map((path, i) => ({ path, fields: r.fields[i] ?? [] }));
}

/** Calls the emulator's control API (faults, clock, profile, the last request to a path, what it billed, the answers it began). */
export async function emulatorControl(
  route: 'faults' | 'clock' | 'reset' | 'profile' | 'last-request' | 'billing' | 'answered' | 'rate-limit',
  body: unknown = {},
): Promise<unknown> {
  const res = await fetch(`${config.emulatorUrl}/__emulator/${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.json();
}

/**
 * Queues the buttons the launcher clicks in VS Code's next modal dialogs (its own dialogs, such
 * as a tool's confirmation, which no extension API answers), and reads what those dialogs said.
 */
export const dialogs = {
  /** Whether someone answers dialogs in this run (the code-server launcher does). */
  answered: (): boolean => !!config.dialogDir,
  answer(...buttons: string[]): void {
    writeFileSync(join(config.dialogDir ?? '', 'answers.json'), JSON.stringify(buttons));
  },
  seen(): { text: string; answer: string }[] {
    const f = join(config.dialogDir ?? '', 'seen.json');
    return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as { text: string; answer: string }[]) : [];
  },
};

/** The reference "everything" MCP server from npm (the repository's node_modules: the installed extension has none). */
export function everythingServerPath(): string {
  return join(resolve(__dirname, '..', '..'), 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
}

/** The everything server over streamable HTTP on a free loopback port, until `stop`. */
export async function startEverythingOverHttp(): Promise<{ port: number; stop: () => void }> {
  const port = await new Promise<number>((done) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => done(p));
    });
  });
  const child = spawn(process.execPath, [everythingServerPath(), 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let said = '';
  child.stdout.on('data', (d: Buffer) => (said += d.toString()));
  child.stderr.on('data', (d: Buffer) => (said += d.toString()));
  let exited = '';
  child.on('exit', (code) => (exited = `exited with ${code}: ${said}`));
  await until(
    'the HTTP MCP server listens',
    () => {
      if (exited) throw new Error(exited);
      return /listening on port/.test(said);
    },
    30_000,
  );
  return { port, stop: () => child.kill() };
}
