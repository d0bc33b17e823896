/**
 * What VS Code loads (dist/extension.js): the extension itself is dist/main.js, compiled with a
 * V8 code cache kept in this extension's global storage. Parsing and compiling the bundle was
 * most of the activation VS Code reports; from the second start on, V8 takes the compiled code
 * from the cache instead (it checks the cache against the source and its own version, and
 * compiles afresh when either changed). The cache is written once per build of the bundle, after
 * the window settles, so that it holds the functions start-up ran; always written whole (a
 * temporary file renamed over it). Only our own bundle goes through here: nothing is hooked that
 * other extensions' modules pass through.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, wrap } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import type * as vscode from 'vscode';

type Main = typeof import('./extension');

/** After activation, when the window has settled: the functions start-up compiled are then in the cache. */
const WRITE_CACHE_AFTER_MS = 15_000;

let main: Main | undefined;

export async function activate(context: vscode.ExtensionContext): ReturnType<Main['activate']> {
  const called = performance.now();
  // VS Code reports as an extension's activation what activate() holds the extension host for
  // without a break. The shell loads in the next turn of the event loop: the extensions that
  // VS Code activates for the same event after this one are not held behind it. VS Code counts
  // the activation done once the promise returned here resolves (commands wait for it).
  await new Promise<void>((resolve) => setImmediate(resolve));
  const started = performance.now();
  const loaded = loadWithCodeCache(join(__dirname, 'main.js'), join(context.globalStorageUri.fsPath, 'code-cache'));
  main = loaded.exports as Main;
  if (loaded.writeCache) {
    const timer = setTimeout(loaded.writeCache, WRITE_CACHE_AFTER_MS);
    context.subscriptions.push({ dispose: () => clearTimeout(timer) });
  }
  return main.activate(context, { waitMs: started - called, loadMs: performance.now() - started, compileMs: loaded.compileMs, cacheUsed: loaded.cacheUsed });
}

export function deactivate(): void {
  main?.deactivate();
}

/** A CommonJS bundle run as `require` would run it, compiled with the cached code when there is a usable cache. */
export function loadWithCodeCache(file: string, cacheDir: string): { exports: unknown; cacheUsed: boolean; compileMs: number; writeCache?: () => void } {
  const source = readFileSync(file, 'utf8');
  const { size, mtimeMs } = statSync(file);
  const name = `main-${process.versions.v8}-${size}-${Math.floor(mtimeMs)}.bin`.replace(/[^\w.-]/g, '_');
  const cacheFile = join(cacheDir, name);
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const compileStarted = performance.now();
  const script = new Script(wrap(source), { filename: file, cachedData });
  const compileMs = performance.now() - compileStarted;
  const module = { exports: {} as unknown };
  (script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  const cacheUsed = cachedData !== undefined && !script.cachedDataRejected;
  if (cacheUsed) return { exports: module.exports, cacheUsed, compileMs };
  const writeCache = () => {
    try {
      mkdirSync(cacheDir, { recursive: true });
      const temporary = `${cacheFile}.${process.pid}.tmp`;
      writeFileSync(temporary, script.createCachedData());
      renameSync(temporary, cacheFile);
      // Caches of earlier builds or V8 versions go.
      for (const other of readdirSync(cacheDir)) if (other !== name) rmSync(join(cacheDir, other), { force: true });
    } catch {
      // A cache that cannot be written costs the next start its compile time, nothing else.
    }
  };
  return { exports: module.exports, cacheUsed, compileMs, writeCache };
}
