// The lint gate `npm test` runs: typescript-eslint's type-checked recommended rules, plus the two
// that catch what this codebase gets wrong most easily: promises nobody awaits, and switches that
// miss a case when a union grows; the import rules that hold the layers (eslint.layers.mjs); and
// the limits on a file's and a function's length.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import { layerRules } from './eslint.layers.mjs';
import { l10nRule } from './eslint/l10n-rule.mjs';

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', 'test-results/**', 'bench/results/**', '**/*.js', '**/*.cjs', '**/*.mjs'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.json', './tsconfig.webview.json'], tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // `const { secret: _, ...rest } = x` is how a field is dropped from a copy.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  {
    // What the host shows goes through vscode.l10n.t (eslint/l10n-rule.mjs).
    files: ['src/extension.ts', 'src/shell/**/*.ts', 'src/*/host/**/*.ts'],
    plugins: { 'model-gateway': { rules: { 'l10n-shown-text': l10nRule } } },
    rules: { 'model-gateway/l10n-shown-text': ['error', 'host'] },
  },
  {
    files: ['src/webview/**/*.ts'],
    plugins: { 'model-gateway': { rules: { 'l10n-shown-text': l10nRule } } },
    rules: { 'model-gateway/l10n-shown-text': ['error', 'webview'] },
  },
  {
    // House rules (issue 72): a file reads whole, a function fits a screenful or two. The figures
    // are raw lines, blank lines and comments included.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 800, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 150, skipBlankLines: false, skipComments: false }],
    },
  },
  // The layer zones come last: a later entry would override their rules.
  ...layerRules,
);
