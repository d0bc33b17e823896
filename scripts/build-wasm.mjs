// Compiles src/search/core/hamming.wat into src/search/core/hamming-wasm.ts (base64), committed so the build
// needs no WebAssembly toolchain. `node scripts/build-wasm.mjs --check` fails when they differ.
import { readFileSync, writeFileSync } from 'node:fs';
import wabtInit from 'wabt';

const wabt = await wabtInit();
const wat = readFileSync('src/search/core/hamming.wat', 'utf8');
const mod = wabt.parseWat('hamming.wat', wat, { simd: true });
const { buffer } = mod.toBinary({});
const b64 = Buffer.from(buffer).toString('base64');
const out = `// Generated from hamming.wat by scripts/build-wasm.mjs; do not edit.\nexport const HAMMING_WASM_BASE64 = '${b64}';\n`;
if (process.argv.includes('--check')) {
  if (readFileSync('src/search/core/hamming-wasm.ts', 'utf8') !== out) {
    console.error('src/search/core/hamming-wasm.ts is out of date: run node scripts/build-wasm.mjs');
    process.exit(1);
  }
} else writeFileSync('src/search/core/hamming-wasm.ts', out);
console.log(`hamming.wasm: ${buffer.length} bytes`);
