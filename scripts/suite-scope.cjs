// Which test files a pass runs, from two markers a file may carry on a line of its own near its top:
//
//   // @vscode-specific: <why>    runs on both tested VS Codes (1.100, the oldest supported, and the
//                                 newest); without it a file runs on the newest only.
//   // @profile-dependent: <why>  runs against both emulator profiles (new-api and one-api);
//                                 without it a file runs against new-api only.
//
// A file needs @vscode-specific when what it checks goes through something that changed between
// the two VS Codes: the language-model and chat APIs, the chat and Language Models editors, the
// built-in language servers (TypeScript), webviews and their focus, quick picks, the walkthrough,
// terminals' shell integration, proxy support in the extension host, inline completions.
// A file needs @profile-dependent when it reads what the profiles answer differently
// (test/emulator/profiles.ts): the account API, usage and logs, relay errors and their types,
// the Messages format's errors, cached-token prices, the routes one of them lacks.
//
// `MODEL_GATEWAY_FULL_MATRIX=1` runs every file in every pass (the old matrix, for a release).
const fs = require('node:fs');

const MARKERS = { vscodeSpecific: /^\/\/ @vscode-specific: \S/m, profileDependent: /^\/\/ @profile-dependent: \S/m };

/** The markers of a test file (its first 4,000 characters are read). */
function markersOf(file) {
  const head = fs.readFileSync(file, 'utf8').slice(0, 4000);
  return { vscodeSpecific: MARKERS.vscodeSpecific.test(head), profileDependent: MARKERS.profileDependent.test(head) };
}

/**
 * Whether `file` runs in a pass against `profile` ('new-api' | 'one-api') on `vscode`
 * ('oldest' | 'newest' | undefined for the suites that run without VS Code).
 */
function inScope(file, { profile, vscode }, env = process.env) {
  if (env.MODEL_GATEWAY_FULL_MATRIX === '1') return true;
  const m = markersOf(file);
  if (profile === 'one-api' && !m.profileDependent) return false;
  if (vscode === 'oldest' && !m.vscodeSpecific) return false;
  return true;
}

module.exports = { inScope, markersOf };
