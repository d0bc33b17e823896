// Builds the extension host bundle (node, cjs, `vscode` external) and the webview bundle (browser).
const esbuild = require('esbuild');
const fs = require('node:fs');

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

/**
 * The MCP SDK's client validates structured tool output with ajv (ajv, its formats and fast-uri:
 * about 140 KB minified). The bundle has zod already: its validator goes in ajv's place.
 */
/**
 * node-postgres's index also loads its pool, its native binding, its .pgpass reader and its
 * connection-string parser; the team store uses one plain `Client` configured field by field, with
 * the password from SecretStorage. Those are left out (8 KB gzipped of the .vsix).
 */
const pgLeftOut = require('./scripts/pg-left-out.cjs');
const pgClientOnly = {
  name: 'pg-client-only',
  setup(build) {
    build.onResolve({ filter: /^(pg-pool|\.\/native|pgpass|pg-connection-string)$/ }, (a) =>
      /[\\/]pg[\\/]lib[\\/]/.test(a.importer) ? { path: a.path, namespace: 'pg-left-out' } : undefined,
    );
    // Each stand-in finds nothing or throws at once (scripts/pg-left-out.cjs).
    build.onLoad({ filter: /.*/, namespace: 'pg-left-out' }, (a) => ({ contents: pgLeftOut[a.path], loader: 'js' }));
  },
};

/**
 * \`vscode\` required once for the whole bundle. As an external, every module importing it
 * required it on its own (79 of them): each call went through VS Code's module interceptor
 * (which looks the caller's extension up by its real path) and copied the API's properties into a
 * new namespace object. Here one ES module re-exports it and the others import that module.
 */
const vscodeOnce = {
  name: 'vscode-once',
  setup(build) {
    build.onResolve({ filter: /^vscode$/ }, (a) =>
      a.namespace === 'vscode-once' ? { path: 'vscode', external: true } : { path: 'vscode', namespace: 'vscode-once' },
    );
    build.onLoad({ filter: /.*/, namespace: 'vscode-once' }, () => ({ contents: "export * from 'vscode';", loader: 'js' }));
  },
};

/** zod's classic API from the shared bundle (`dist/zod.js`) rather than a copy in each bundle. */
const sharedZod = {
  name: 'shared-zod',
  setup(build) {
    build.onResolve({ filter: /^(zod(\/v4)?|\.\/zod\.js)$/ }, () => ({ path: './zod.js', external: true }));
    // zod/mini from the same bundle, on the same core as the classic API (the MCP SDK parses classic schemas with it).
    build.onResolve({ filter: /^zod\/(v4-)?mini$/ }, () => ({ path: 'zod-mini', namespace: 'shared-zod' }));
    build.onLoad({ filter: /.*/, namespace: 'shared-zod' }, () => ({ contents: "module.exports = require('./zod.js').mini;" }));
  },
};

/** The shared zod speaks English only: its other locales (130 KB) are never configured. */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onLoad({ filter: /zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (a) => ({
      contents: 'export { default as en } from "./en.js";',
      resolveDir: require('node:path').dirname(a.path),
    }));
  },
};

/**
 * undici's HTTP parser (llhttp) ships as WebAssembly in base64 inside a JS module; the gateway
 * bundle reads it as the binary file dist/llhttp.wasm instead (6 KB less in the .vsix: the binary
 * compresses better than its base64).
 */
const llhttpAsFile = {
  name: 'llhttp-wasm-file',
  setup(build) {
    build.onLoad({ filter: /undici[\\/]lib[\\/]llhttp[\\/]llhttp-wasm\.js$/ }, () => ({
      contents: "module.exports = require('node:fs').readFileSync(require('node:path').join(__dirname, 'llhttp.wasm'));",
      loader: 'js',
    }));
  },
};

function writeLlhttpWasm() {
  fs.mkdirSync('dist', { recursive: true });
  fs.writeFileSync('dist/llhttp.wasm', require('undici/lib/llhttp/llhttp-wasm.js'));
}

const zodForAjv = {
  name: 'mcp-json-schema-validator',
  setup(build) {
    build.onResolve({ filter: /validation\/ajv-provider\.js$/ }, () => ({
      path: require('node:path').join(__dirname, 'src', 'mcp', 'core', 'jsonSchemaValidator.ts'),
    }));
  },
};

/**
 * The search core's largest modules (the keyword and vector indexes, their stores, the snapshot
 * jobs) are in the worker's bundle already: the extension's bundle takes them from its `modules`
 * export (src/search/core/snapshot/snapshotWorker.ts) instead of a second copy (about 9 KB of the .vsix).
 * Each module becomes an object of getters that requires the worker bundle on first use, so
 * loading the shell does not load it.
 */
/** Each module the extension's bundle takes from the worker's, by its name in `modules` and its room. */
const SEARCH_CORE_FROM_WORKER = { indexStore: 'store', keywords: 'keywords', keywordStore: 'keywords', snapshotJob: 'snapshot', vectorIndex: 'vectors' };
const searchCoreFromWorker = {
  name: 'search-core-from-worker',
  setup(build) {
    const path = require('node:path');
    const dir = path.join(__dirname, 'src', 'search', 'core');
    const fileOf = (name) => path.join(dir, SEARCH_CORE_FROM_WORKER[name], `${name}.ts`);
    const exportsOf = new Map();
    build.onResolve({ filter: new RegExp(`/(${Object.keys(SEARCH_CORE_FROM_WORKER).join('|')})(\\.ts)?$`) }, (a) => {
      const file = path.resolve(a.resolveDir, a.path).replace(/(\.ts)?$/, '.ts');
      const name = path.basename(file, '.ts');
      return Object.hasOwn(SEARCH_CORE_FROM_WORKER, name) && file === fileOf(name) ? { path: name, namespace: 'search-core-from-worker' } : undefined;
    });
    build.onLoad({ filter: /.*/, namespace: 'search-core-from-worker' }, async (a) => {
      if (!exportsOf.has(a.path)) {
        const probe = await esbuild.build({
          entryPoints: [fileOf(a.path)],
          bundle: true,
          platform: 'node',
          format: 'esm',
          write: false,
          metafile: true,
          outdir: 'probe',
          logLevel: 'silent',
        });
        exportsOf.set(a.path, Object.values(probe.metafile.outputs).find((o) => o.entryPoint)?.exports ?? []);
      }
      const names = exportsOf.get(a.path);
      if (names.length === 0) throw new Error(`search-core-from-worker: ${a.path} exports nothing`);
      const getters = names.map((n) => `${JSON.stringify(n)}: { get: () => load()[${JSON.stringify(n)}], enumerable: true }`).join(',\n');
      return {
        contents: `let module_;\nconst load = () => (module_ ??= require('./searchWorker.js').modules[${JSON.stringify(a.path)}]);\nmodule.exports = Object.defineProperties({}, {\n${getters}\n});\n`,
        loader: 'js',
      };
    });
  },
};

/** @type {import('esbuild').BuildOptions[]} */
const targets = [
  // What VS Code loads: it compiles the shell (dist/main.js) with a V8 code cache (src/boot.ts).
  {
    entryPoints: ['src/boot.ts'],
    outfile: 'dist/extension.js',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    minify: production,
    keepNames: false,
    sourcemap: !production,
    logLevel: 'warning',
  },
  // The shell: what activation runs. The gateway client is a separate bundle it requires on
  // first use, so activation stays small.
  {
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/main.js',
    plugins: [vscodeOnce, searchCoreFromWorker],
    // How long the bundle's top-level code took to run (src/extension.ts logs it).
    banner: { js: '"use strict";const MODEL_GATEWAY_BUNDLE_START = performance.now();let MODEL_GATEWAY_BUNDLE_END;' },
    footer: { js: 'MODEL_GATEWAY_BUNDLE_END = performance.now();' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // system-ca's readers for the Windows and macOS stores are native modules we do not ship: there
    // the OS store comes from Node's own reader (VS Code builds on Node 22.15+), else a notice.
    external: [
      'vscode',
      './gateway.js',
      './mcp.js',
      './teamStore.js',
      './searchWorker.js',
      'win-export-certificate-and-key',
      'macos-export-certificate-and-key',
    ],
    minify: production,
    // The shell's error classes set their own \`name\`; the gateway's (told apart by name across
    // bundles) are in gateway.js. Kept names would cost 10 KB of the .vsix here.
    keepNames: false,
    sourcemap: !production,
    logLevel: 'warning',
  },
  {
    entryPoints: ['src/entries/gateway-entry.ts'],
    plugins: [sharedZod, llhttpAsFile],
    outfile: 'dist/gateway.js',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Two undici modules left out on purpose, both loaded only on paths we never take or that
    // have a fallback: fetch's body encoder (required only for a FormData body: our multipart
    // bodies are streams, src/gateway/core/multipart.ts) and the SIMD build of the HTTP parser
    // (undici tries it, and on failure loads the portable build, which is bundled). Saves ~115 KB.
    external: ['vscode', '*/web/fetch/body.js', '*/llhttp/llhttp_simd-wasm.js'],
    minify: production,
    // Error classes are told apart by name across bundles: each sets its own (test/unit/errors.test.ts
    // checks), so minified class names cost nothing.
    keepNames: false,
    sourcemap: !production,
    logLevel: 'warning',
  },
  {
    // The MCP client (the official SDK), required the first time a server starts.
    entryPoints: ['src/entries/mcp-entry.ts'],
    plugins: [zodForAjv, sharedZod],
    outfile: 'dist/mcp.js',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    minify: production,
    // The SDK's errors set their own names; ours are in gateway.js.
    keepNames: false,
    sourcemap: !production,
    logLevel: 'warning',
  },
  {
    // zod's classic API, required by the gateway client and the MCP SDK (see sharedZod).
    entryPoints: ['src/entries/zod-entry.ts'],
    plugins: [zodEnglishOnly],
    outfile: 'dist/zod.js',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: production,
    // zod names its classes itself ($constructor(name, …)).
    keepNames: false,
    sourcemap: !production,
    logLevel: 'warning',
  },
  {
    // The team store's Postgres client, required the first time a team store is used. pg's
    // native binding and its Cloudflare socket are never taken on Node (optional requires).
    entryPoints: ['src/entries/teamStore-entry.ts'],
    plugins: [pgClientOnly],
    outfile: 'dist/teamStore.js',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode', 'pg-native', 'pg-cloudflare'],
    minify: production,
    // Its one error class names itself (TeamStoreError sets `name`).
    keepNames: false,
    sourcemap: !production,
    logLevel: 'warning',
  },
  {
    // model-gateway-index, the command line that fills a team store from CI (not in the .vsix).
    entryPoints: ['src/cli/indexCli.ts'],
    outfile: 'dist-cli/model-gateway-index.js',
    banner: { js: '#!/usr/bin/env node' },
    plugins: [pgClientOnly],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['pg-native', 'pg-cloudflare'],
    minify: production,
    keepNames: true,
    sourcemap: false,
    logLevel: 'warning',
  },
  {
    // The search index's snapshot worker (a worker thread the extension starts for folds and builds).
    entryPoints: ['src/search/core/snapshot/snapshotWorker.ts'],
    outfile: 'dist/searchWorker.js',
    // Its stores' zod/mini from the shared zod.js beside it (7 KB of the .vsix).
    plugins: [sharedZod],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: production,
    // Its error classes name themselves.
    keepNames: false,
    sourcemap: !production,
    logLevel: 'warning',
  },
];

// The webview bundles: the chat, and the Usage view (with its chart library).
for (const [entry, out] of [
  ['src/webview/main.ts', 'dist/webview.js'],
  ['src/webview/usage.ts', 'dist/usage.js'],
]) {
  targets.push({
    entryPoints: [entry],
    outfile: out,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: production,
    sourcemap: !production,
    logLevel: 'warning',
  });
}

// The webviews' stylesheets, minified for the package (their comments are a third of them).
for (const name of ['chat', 'usage']) {
  targets.push({ entryPoints: [`media/${name}.css`], outfile: `dist/${name}.css`, bundle: true, minify: production, logLevel: 'warning' });
}

/**
 * The codicon font for the webview (theme-aware icons, no remote fonts), cut to the icons the
 * webview names (any quoted word of src/webview/ that is an icon): the stylesheet's 32 KB of rules
 * become about 3 KB, and the font (subset-font, HarfBuzz) 123 KB become about 6 KB of WOFF2.
 */
async function copyCodicons() {
  const from = 'node_modules/@vscode/codicons/dist';
  fs.mkdirSync('dist/codicons', { recursive: true });
  const words = new Set();
  for (const f of fs.readdirSync('src/webview')) {
    if (!f.endsWith('.ts')) continue;
    for (const m of fs.readFileSync(`src/webview/${f}`, 'utf8').matchAll(/['"`]([a-z0-9 -]+)['"`]/g))
      for (const w of m[1].split(' ')) words.add(w.replace(/^codicon-/, ''));
  }
  const css = fs.readFileSync(`${from}/codicon.css`, 'utf8');
  const kept = css.split('\n').filter((line) => {
    const icon = /^\.codicon-([a-z0-9-]+):before/.exec(line);
    return !icon || words.has(icon[1]);
  });
  // WOFF2 (Brotli inside) rather than TrueType: a third smaller in the .vsix, and every webview reads it.
  fs.writeFileSync(
    'dist/codicons/codicon.css',
    kept.join('\n').replace(/url\("\.\/codicon\.ttf[^"]*"\) format\("truetype"\)/, 'url("./codicon.woff2") format("woff2")'),
  );
  const glyphs = kept.flatMap((line) => [...line.matchAll(/content: "\\([0-9a-f]+)"/g)].map((m) => String.fromCodePoint(parseInt(m[1], 16)))).join('');
  const { default: subsetFont } = await import('subset-font');
  fs.rmSync('dist/codicons/codicon.ttf', { force: true });
  fs.writeFileSync('dist/codicons/codicon.woff2', await subsetFont(fs.readFileSync(`${from}/codicon.ttf`), glyphs, { targetFormat: 'woff2' }));
}

/** What a build writes under dist/ (the package must hold each): its bundles, stylesheets, the font and the wasm. */
function outputs() {
  return [
    ...targets.map((t) => t.outfile).filter((f) => f.startsWith('dist/')),
    'dist/llhttp.wasm',
    'dist/codicons/codicon.css',
    'dist/codicons/codicon.woff2',
  ];
}

async function main() {
  if (process.argv.includes('--list-outputs')) return console.log(JSON.stringify(outputs()));
  await copyCodicons();
  writeLlhttpWasm();
  if (watch) {
    const contexts = await Promise.all(targets.map((t) => esbuild.context(t)));
    await Promise.all(contexts.map((c) => c.watch()));
    return;
  }
  const results = await Promise.all(targets.map((t) => esbuild.build({ ...t, metafile: true })));
  for (const r of results) {
    for (const [file, info] of Object.entries(r.metafile.outputs)) {
      if (file.endsWith('.js')) console.log(`${file}: ${(info.bytes / 1024).toFixed(1)} KB`);
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
