// The layers of src/, held by import rules (docs/architecture.md draws them):
//   common/    browser-safe modules both sides share: imports only common/, zod and @vscode/l10n
//   gateway/   the client: no vscode, no feature, no platform (common/ is allowed)
//   webview/   browser code: only webview/, common/ and its own libraries
//   shell/     the platform: never a feature
//   tools/, storage/   Node libraries under the features: no vscode, no platform, no feature
//   runtime/   a model turn on the person's account, for every surface that runs one:
//              runtime/core/ (no vscode: the tool policy, commands) under runtime/host/ (VS Code);
//              never a feature (the features declare what they may do and call it)
//   <feature>/core/    a feature's logic: no vscode, nothing of a host/, no platform, no webview
// A feature's host/ adapts its core to VS Code and may use the platform and other features.
// test/unit/layers.test.ts plants a wrong import in each layer and checks that lint refuses it.

const FEATURES = 'chat|search|usage|account|assets|lm|agent|mcp|completions|editor|customization|scm|sessions';
/**
 * The only imports from one feature into another, each for a reason docs/architecture.md gives:
 * the chat offers the editor's language tools and the semantic search; the inline completions and
 * VS Code's chat read the search index (and its tools save media as the assets commands do).
 * Anything else shared goes through the runtime or common/, or is wired in src/extension.ts.
 */
const FEATURE_PAIRS = { chat: ['editor', 'search'], completions: ['search'], lm: ['search', 'assets'] };
/** A feature's import of another feature, unless the pair is listed. */
const otherFeatures = (feature) => {
  const allowed = new Set([feature, ...(FEATURE_PAIRS[feature] ?? [])]);
  const others = FEATURES.split('|').filter((f) => !allowed.has(f));
  return {
    regex: String.raw`^(\.\./)+(${others.join('|')})/`,
    message: `A feature does not import another feature (${feature} may import ${[...allowed].filter((f) => f !== feature).join(', ') || 'none'}: eslint.layers.mjs FEATURE_PAIRS): share it through src/runtime/ or src/common/.`,
  };
};
/** A model turn is run by the runtime only (`runtime/host/modelTurn.ts`): a feature declares it, the runtime adds the policy. */
const RUN_TURN = {
  regex: String.raw`runtime/core/engine$`,
  importNames: ['runTurn'],
  message: 'A feature runs a model turn through runModelTurn (src/runtime/host/modelTurn.ts), which adds the model profile, the cost limit and the policy.',
};
const up = (folders) => String.raw`^(\.\./)+(${folders})(/|$)`;
const vscode = { name: 'vscode', message: 'This layer runs without VS Code: keep `vscode` in a host/ or shell/ module.' };
const restrict = (patterns, paths = []) => ['error', { paths, patterns }];

/** What a feature's core/ may not import: a host/, the platform, a webview (and vscode). */
const CORE = [
  { regex: String.raw`(^|/)host(/|$)`, message: "A feature's core/ never imports a host/ module: the host adapts the core, not the other way round." },
  { regex: up('shell|webview'), message: "A feature's core/ runs in plain Node: no platform, no webview." },
];

/** The search core's rooms and what each may not import of the others (`../x` is the core's top level). */
const SEARCH_ROOMS = {
  vectors: {
    refuse: String.raw`^\.\./(?!\.\./)`,
    message: 'vectors/ is a leaf of the search core: the vector index and its kernels import nothing else of it.',
  },
  keywords: {
    refuse: String.raw`^\.\./(?!\.\./)`,
    message: 'keywords/ is a leaf of the search core: the keyword index and its files import nothing else of it.',
  },
  store: { refuse: String.raw`^\.\./(?!\.\./|slices$)`, message: 'store/ (the snapshot and log files) takes only slices from the search core.' },
  snapshot: {
    refuse: String.raw`^\.\./(?!\.\./|slices$|vectors/|keywords/|store/)`,
    message: 'snapshot/ writes snapshots from vectors/, keywords/ and store/: it never reaches the index or the team store.',
  },
  team: { refuse: String.raw`^\.\./(snapshot|store)/`, message: 'team/ (the shared store) does not touch the local snapshots or their files.' },
};

export const layerRules = [
  {
    files: ['src/common/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict([
        {
          regex: String.raw`^(?!\./[^/]+$|zod(/mini)?$|@vscode/l10n$)`,
          message: 'common/ imports only common/, zod and @vscode/l10n: both the extension host and the webviews load it.',
        },
      ]),
    },
  },
  {
    files: ['src/gateway/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        [
          {
            regex: up(`${FEATURES}|runtime|shell|webview|tools|storage`),
            message: 'The gateway client knows no feature, runtime, platform or webview: move shared code to common/.',
          },
        ],
        [vscode],
      ),
    },
  },
  {
    files: ['src/webview/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        [
          { regex: String.raw`^\.\./(?!common/)`, message: 'Webview code imports only webview/ and common/.' },
          { regex: '^(node:|undici|vscode$)', message: 'Webview code runs in the browser.' },
        ],
        [vscode],
      ),
    },
  },
  {
    files: ['src/shell/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict([
        {
          regex: up(`${FEATURES}|runtime|webview`),
          message: 'The platform never imports a feature or the runtime: the feature registers itself (its host/feature.ts, listed in extension.ts).',
        },
      ]),
    },
  },
  {
    files: ['src/tools/**/*.ts', 'src/storage/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        [
          {
            regex: up(`${FEATURES}|runtime|shell|webview`),
            message: 'tools/ and storage/ are Node libraries under the runtime and the features: no platform, no feature.',
          },
        ],
        [vscode],
      ),
    },
  },
  {
    files: ['src/runtime/core/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        [...CORE, { regex: up(FEATURES), message: 'The runtime never imports a feature: a surface declares what it may do and calls the runtime.' }],
        [vscode],
      ),
    },
  },
  {
    files: ['src/runtime/host/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict([
        { regex: up(`${FEATURES}|webview`), message: 'The runtime never imports a feature: a surface declares what it may do and calls the runtime.' },
      ]),
    },
  },
  // Each feature: its core/ under the core's rules, and both its folders kept from the other
  // features but for the pairs listed in FEATURE_PAIRS.
  ...FEATURES.split('|').flatMap((feature) => [
    { files: [`src/${feature}/core/**/*.ts`], rules: { 'no-restricted-imports': restrict([...CORE, otherFeatures(feature), RUN_TURN], [vscode]) } },
    { files: [`src/${feature}/host/**/*.ts`], rules: { 'no-restricted-imports': restrict([otherFeatures(feature), RUN_TURN]) } },
  ]),
  // The search core's rooms (docs/architecture.md): vectors/ and keywords/ are leaves; store/ holds
  // the snapshot and log files; snapshot/ writes them from vectors and keywords; team/ is the
  // shared store. The index and hybrid ranking at the top level use them all; no room reaches up.
  // Each zone repeats the core's rules: a later zone's rule replaces an earlier one's.
  ...Object.entries(SEARCH_ROOMS).map(([room, { refuse, message }]) => ({
    files: [`src/search/core/${room}/**/*.ts`],
    rules: { 'no-restricted-imports': restrict([...CORE, otherFeatures('search'), RUN_TURN, { regex: refuse, message }], [vscode]) },
  })),
];
