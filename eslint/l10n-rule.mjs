// A lint rule: text shown to a person goes through `l10n.t`, so the language bundles
// (l10n/bundle.l10n.*.json) can translate it. In the extension host (profile "host", fixed with
// `vscode.l10n.t`) it looks where VS Code shows text: notification and modal messages and their
// buttons, quick pick and input box titles, prompts, placeholders and items, progress titles and
// messages, tree items, status bar items, and the input boxes' validation messages. In the
// webviews (profile "webview", fixed with `@vscode/l10n`'s `l10n.t`) it looks at what the page
// shows: element text and children, titles, placeholders, aria labels, buttons and notices.
// A string with no letter (an icon, a separator) or an enum value (AUTO) is left alone.
// `--fix` wraps a literal, and turns a template into `l10n.t('… {0} …', value)`.

const HOST = {
  call: 'vscode.l10n.t',
  showCalls: new Set(['showInformationMessage', 'showWarningMessage', 'showErrorMessage', 'setStatusBarMessage']),
  /** Calls that take a title as an argument (a webview panel's tab). */
  titleArgs: { createWebviewPanel: 1 },
  /** Our own helpers that show text (shell/prompts.ts, shell/errors.ts), by argument index; -n: every argument from index n-1 on. */
  helperArgs: {
    say: [0],
    restore: [1, 2],
    confirm: [0, 1, 2],
    choose: [0, 1, 2],
    notify: [0, 1],
    tell: [2, -3],
    showGatewayError: [1],
    pickOne: [0],
    askInteger: [0, 1],
    pickModel: [2],
    askPrompt: [0, 1],
    askSpeed: [0],
    assetsFolderOrSay: [1],
    targetFile: [3],
  },
  /** Calls whose object argument's shown properties are text (post: a notice or note for the chat webview). */
  objectSinks: new Set([
    'post',
    'askSecret',
    'showOpenDialog',
    'showSaveDialog',
    'showQuickPick',
    'showInputBox',
    'withProgress',
    'report',
    'pick',
    'pickMany',
    'input',
    'createQuickPick',
    'createInputBox',
    'createStatusBarItem',
    'createTreeView',
  ]),
  /** Shown wherever they are: a language model tool's messages in VS Code's chat, a file dialog's button, a problem said to the person. */
  alwaysShownProps: new Set(['problem', 'invocationMessage', 'pastTenseMessage', 'openLabel', 'saveLabel']),
  shownProps: new Set([
    'what',
    'text',
    'note',
    'openLabel',
    'saveLabel',
    'title',
    'prompt',
    'placeHolder',
    'placeholder',
    'label',
    'description',
    'detail',
    'tooltip',
    'message',
    'validationMessage',
    'name',
  ]),
  assignedProps: new Set(['text', 'tooltip', 'title', 'placeholder', 'prompt', 'description', 'message', 'validationMessage', 'label', 'name']),
  newShown: new Set(['TreeItem', 'MarkdownString', 'QuickInputButton']),
  quickPickItems: true,
};

const WEBVIEW = {
  call: 'l10n.t',
  showCalls: new Set(),
  /** dom.ts's h(tag, attrs, ...children) and button(label, …); the views' notices. */
  helperArgs: { h: [-3], button: [0], showNotice: [0], setAttribute: [1], confirm: [0], note: [0], section: [0], card: [0, 1, 2], table: [0, 1, 2] },
  objectSinks: new Set(['h', 'button']),
  alwaysShownProps: new Set(),
  shownProps: new Set(['text', 'title', 'placeholder', 'aria-label', 'alt', 'aria-description', 'data-tip']),
  assignedProps: new Set(['textContent', 'title', 'placeholder', 'ariaLabel', 'innerText']),
  newShown: new Set(),
  quickPickItems: false,
};
const PROFILES = { host: HOST, webview: WEBVIEW };
/** Nodes a string passes through on its way to where it is shown. */
const PASS_THROUGH = new Set([
  'ConditionalExpression',
  'LogicalExpression',
  'TSAsExpression',
  'TSNonNullExpression',
  'ArrayExpression',
  'SpreadElement',
  'ChainExpression',
]);

const calleeName = (callee) =>
  callee.type === 'MemberExpression' && callee.property.type === 'Identifier' ? callee.property.name : callee.type === 'Identifier' ? callee.name : undefined;
const isL10nCall = (node) =>
  node?.type === 'CallExpression' &&
  node.callee.type === 'MemberExpression' &&
  calleeName(node.callee) === 't' &&
  /(^|\.)l10n$/.test(sourceOf(node.callee.object));
let sourceOf = () => '';
const isL10nMember = (node) =>
  node.type === 'MemberExpression' &&
  !node.computed &&
  node.property.type === 'Identifier' &&
  node.property.name === 't' &&
  /(^|\.)l10n$/.test(sourceOf(node.object));

function textOf(node) {
  if (node.type === 'Literal') return typeof node.value === 'string' ? node.value : undefined;
  if (node.type === 'TemplateLiteral') return node.quasis.map((q) => q.value.cooked).join(' ');
  return undefined;
}

/** Where the string ends up: a description of the sink, or undefined when it is not shown. */
function sinkOf(node, P) {
  let child = node;
  let parent = node.parent;
  let property;
  for (let depth = 0; parent && depth < 12; depth++) {
    if (isL10nCall(parent)) return undefined;
    if (parent.type === 'BinaryExpression' && parent.operator === '+') {
      // fall through: a concatenation is shown where the whole is shown
    } else if (PASS_THROUGH.has(parent.type)) {
      // the value passes on unchanged
    } else if (parent.type === 'Property' && parent.value === child) {
      const key = parent.key.type === 'Identifier' ? parent.key.name : parent.key.type === 'Literal' ? String(parent.key.value) : undefined;
      if (key === undefined || !(P.shownProps.has(key) || P.alwaysShownProps.has(key) || key === 'validateInput')) return undefined;
      if (P.alwaysShownProps.has(key)) return key;
      const holder = parent.parent.parent;
      const isItem =
        P.quickPickItems &&
        ['label', 'description', 'detail'].includes(key) &&
        parent.parent.properties.some((p) => p.type === 'Property' && p.key.type === 'Identifier' && p.key.name === 'label');
      if (isItem) return `a quick pick item's ${key}`;
      if (holder?.type === 'Property' && holder.key.type === 'Identifier' && holder.key.name === 'confirmationMessages') return `confirmationMessages.${key}`;
      property ??= key;
    } else if (parent.type === 'ObjectExpression') {
      // an object literal on its way to a call
    } else if (parent.type === 'ArrowFunctionExpression' && parent.body === child) {
      // an arrow's value: a map over items, or validateInput
    } else if (parent.type === 'ReturnStatement') {
      // a function's value: find the function
      let up = parent.parent;
      while (up && !/Function/.test(up.type)) up = up.parent;
      if (!up) return undefined;
      child = up;
      parent = up.parent;
      continue;
    } else if (parent.type === 'CallExpression' && parent.callee !== child) {
      const name = calleeName(parent.callee);
      const index = parent.arguments.indexOf(child);
      if (name && P.showCalls.has(name)) return name;
      if (name && P.titleArgs?.[name] === index) return `${name}'s title`;
      if (
        name === 'setAttribute' &&
        parent.arguments[0]?.type === 'Literal' &&
        !['title', 'aria-label', 'placeholder', 'alt'].includes(String(parent.arguments[0].value))
      )
        return undefined;
      if (name && Object.hasOwn(P.helperArgs, name) && !property) {
        const spec = P.helperArgs[name];
        if (spec.includes(index) || spec.some((s) => s < 0 && index >= -s - 1)) return name;
      }
      if (name && P.objectSinks.has(name) && property) return `${name}({ ${property} })`;
      if (name === 'map' || name === 'filter' || name === 'flatMap' || name === 'concat') {
        // items made by a map: keep looking where the array goes
      } else return undefined;
    } else if (parent.type === 'NewExpression') {
      const name = calleeName(parent.callee);
      return name && P.newShown.has(name) && parent.arguments[0] === child ? `new ${name}` : undefined;
    } else if (parent.type === 'AssignmentExpression' && parent.right === child) {
      const target = parent.left;
      return target.type === 'MemberExpression' && target.property.type === 'Identifier' && P.assignedProps.has(target.property.name) && !target.computed
        ? `.${target.property.name} =`
        : undefined;
    } else if (parent.type === 'VariableDeclarator' || parent.type === 'ExpressionStatement' || parent.type === 'Program') {
      return undefined;
    } else if (parent.type === 'MemberExpression' || parent.type === 'TemplateLiteral' || parent.type === 'TaggedTemplateExpression') {
      return undefined;
    } else return undefined;
    child = parent;
    parent = parent.parent;
  }
  return undefined;
}

const quote = (s) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}'`;

function fixFor(node, source, call) {
  if (node.type === 'Literal') return `${call}(${quote(node.value)})`;
  const parts = [];
  node.quasis.forEach((q, i) => {
    // l10n.t leaves braces alone unless they hold an argument's index: text braces need no escape.
    parts.push(q.value.cooked);
    if (i < node.expressions.length) parts.push(`{${i}}`);
  });
  const args = node.expressions.map((e) => source.getText(e));
  return `${call}(${[quote(parts.join('')), ...args].join(', ')})`;
}

export const l10nRule = {
  meta: {
    type: 'problem',
    fixable: 'code',
    docs: { description: 'Text shown to a person goes through vscode.l10n.t' },
    messages: {
      wrap: 'Text shown by {{sink}} goes through l10n.t, so it can be translated (l10n/bundle.l10n.*.json).',
      alias: 'Call l10n.t directly: the string export (@vscode/l10n-dev) finds only direct calls, so an alias leaves its strings untranslated.',
    },
    schema: [{ enum: ['host', 'webview'] }],
  },
  create(context) {
    const P = PROFILES[context.options[0] ?? 'host'];
    const source = context.sourceCode;
    sourceOf = (n) => source.getText(n);
    const check = (node) => {
      if (
        node.parent?.type === 'TaggedTemplateExpression' ||
        node.parent?.type === 'ImportDeclaration' ||
        node.parent?.type === 'ExportNamedDeclaration' ||
        node.parent?.type === 'ExportAllDeclaration'
      )
        return;
      const text = textOf(node);
      // An enum value (AUTO, V_3) is data, not text.
      if (text === undefined || !/[A-Za-z]{2}/.test(text.replace(/\$\([a-z-~]+\)/g, '')) || /^[A-Z0-9_]+$/.test(text)) return;
      const sink = sinkOf(node, P);
      if (!sink) return;
      context.report({ node, messageId: 'wrap', data: { sink }, fix: (f) => f.replaceText(node, fixFor(node, source, P.call)) });
    };
    const aliased = (node) => {
      if (!isL10nMember(node)) return;
      if (node.parent?.type === 'CallExpression' && node.parent.callee === node) return;
      context.report({ node, messageId: 'alias' });
    };
    return { Literal: check, TemplateLiteral: check, MemberExpression: aliased };
  },
};
