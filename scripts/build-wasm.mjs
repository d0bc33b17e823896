// Compiles the WebAssembly kernels (src/search/core/vectors/*.wat) into TypeScript modules holding them in
// base64, committed so the build needs no WebAssembly toolchain. `node scripts/build-wasm.mjs
// --check` fails when they differ.
import { readFileSync, writeFileSync } from 'node:fs';
import wabtInit from 'wabt';

const wabt = await wabtInit();
const kernels = [
  { wat: 'hamming.wat', ts: 'hamming-wasm.ts', name: 'HAMMING_WASM_BASE64' },
  { wat: 'rotation.wat', ts: 'rotation-wasm.ts', name: 'ROTATION_WASM_BASE64' },
  { wat: 'halfFloat.wat', ts: 'halfFloat-wasm.ts', name: 'HALF_FLOAT_WASM_BASE64' },
];
let stale = false;
for (const k of kernels) {
  const mod = wabt.parseWat(k.wat, readFileSync(`src/search/core/vectors/${k.wat}`, 'utf8'), { simd: true });
  const { buffer } = mod.toBinary({});
  const out = `// Generated from ${k.wat} by scripts/build-wasm.mjs; do not edit.\nexport const ${k.name} = '${Buffer.from(buffer).toString('base64')}';\n`;
  const path = `src/search/core/vectors/${k.ts}`;
  if (process.argv.includes('--check')) {
    if (readFileSync(path, 'utf8') !== out) {
      console.error(`${path} is out of date: run node scripts/build-wasm.mjs`);
      stale = true;
    }
  } else writeFileSync(path, out);
  console.log(`${k.wat}: ${buffer.length} bytes`);
}
if (stale) process.exit(1);
