// Installs code-server 4.100.3 (VS Code 1.100.3, Node 20) from npm into a cache folder outside
// the clone, with the Debian packages it needs, and reuses the folder when it is complete.
// Usage: node scripts/setup-code-server.mjs  → prints the install folder on its last line.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const CODE_SERVER_VERSION = '4.100.3';
const DEBIAN_PACKAGES = ['libkrb5-dev', 'libx11-dev', 'libxkbfile-dev', 'libsecret-1-dev', 'ripgrep', 'chromium'];

export function cacheDir() {
  const base = process.env.MODEL_GATEWAY_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'model-gateway');
  return join(base, `code-server-${CODE_SERVER_VERSION}`);
}

const log = (m) => console.error(`[setup-code-server] ${m}`);

function run(cmd, args, cwd) {
  log(`${cmd} ${args.join(' ')}${cwd ? `  (in ${cwd})` : ''}`);
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, npm_config_yes: 'true' } });
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

export function ensureCodeServer() {
  const dir = cacheDir();
  const marker = join(dir, '.complete');
  const entry = join(dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  if (existsSync(marker) && existsSync(entry) && readFileSync(marker, 'utf8').trim() === CODE_SERVER_VERSION) return dir;
  log(`installing code-server ${CODE_SERVER_VERSION} into ${dir} (about 2 minutes, once)`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'code-server-cache', private: true }));
  run('npm', ['install', `code-server@${CODE_SERVER_VERSION}`, '--ignore-scripts', '--no-audit', '--no-fund', '--no-save'], dir);
  const vscodeDir = join(dir, 'node_modules', 'code-server', 'lib', 'vscode');
  run('npm', ['install', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], vscodeDir);
  // @vscode/ripgrep downloads its binary from GitHub unless one is already in place.
  const rgDir = join(vscodeDir, 'node_modules', '@vscode', 'ripgrep', 'bin');
  mkdirSync(rgDir, { recursive: true });
  const rg = execFileSync('sh', ['-c', 'command -v rg'], { encoding: 'utf8' }).trim();
  copyFileSync(rg, join(rgDir, 'rg'));
  run('npm', ['rebuild'], vscodeDir);
  run('npm', ['rebuild', 'argon2'], dir);
  const asar = join(vscodeDir, 'node_modules.asar');
  rmSync(asar, { force: true });
  symlinkSync('node_modules', asar);
  writeFileSync(marker, CODE_SERVER_VERSION);
  return dir;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    ensureDebianPackages();
    console.log(ensureCodeServer());
  } catch (err) {
    console.error(String(err instanceof Error ? err.message : err));
    process.exit(1);
  }
}
