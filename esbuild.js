// Builds the extension host bundle (node, cjs, `vscode` external) and the webview bundle (browser).
const esbuild = require('esbuild');
const fs = require('node:fs');

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

/** @type {import('esbuild').BuildOptions[]} */
const targets = [
  // The shell: what activation loads. The gateway client is a separate bundle it requires on
  // first use, so activation stays small.
  {
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode', './gateway.js'],
    minify: production,
    // Error classes are told apart by name (err.name) across bundles: keep names when minifying.
    keepNames: true,
    sourcemap: !production,
    logLevel: 'warning',
  },
  {
    entryPoints: ['src/gateway-entry.ts'],
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
    keepNames: true,
    sourcemap: !production,
    logLevel: 'warning',
  },
];

// The webview bundle slot: built for the browser as soon as the chat panel adds its entry point.
if (fs.existsSync('src/webview/main.ts')) {
  targets.push({
    entryPoints: ['src/webview/main.ts'],
    outfile: 'dist/webview.js',
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: production,
    sourcemap: !production,
    logLevel: 'warning',
  });
}

/** The codicon font for the webview (theme-aware icons, no remote fonts). */
function copyCodicons() {
  const from = 'node_modules/@vscode/codicons/dist';
  fs.mkdirSync('dist/codicons', { recursive: true });
  for (const f of ['codicon.css', 'codicon.ttf']) fs.copyFileSync(`${from}/${f}`, `dist/codicons/${f}`);
}

async function main() {
  copyCodicons();
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
