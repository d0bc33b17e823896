// A lint rule: text the host shows a person goes through `vscode.l10n.t`, so the language bundles
// (l10n/bundle.l10n.*.json) can translate it. It looks where VS Code shows text: notification and
// modal messages and their buttons, quick pick and input box titles, prompts, placeholders and
// items, progress titles and messages, tree items, status bar items, and the input boxes'
// validation messages. A string with no letter (an icon, a separator) is left alone.
// `--fix` wraps a literal, and turns a template into `vscode.l10n.t('… {0} …', value)`.

const SHOW_CALLS = new Set(['showInformationMessage', 'showWarningMessage', 'showErrorMessage', 'setStatusBarMessage']);
/** Our own helpers that show text (shell/prompts.ts, shell/errors.ts), by argument index; -1: every argument from that index on. */
const HELPER_ARGS = { say: [0], restore: [1, 2], confirm: [0, 1, 2], choose: [0, 1, 2], notify: [0, 1], tell: [2, -3], showGatewayError: [1], pickOne: [0], askInteger: [0, 1], pickModel: [2], askPrompt: [0, 1], askSpeed: [0], assetsFolderOrSay: [1], targetFile: [3] };
/** Calls whose object argument's shown properties are text (post: a notice or note for the chat webview). */
const OBJECT_SINKS = new Set(['post', 'askSecret', 'showOpenDialog', 'showSaveDialog', 'showQuickPick', 'showInputBox', 'withProgress', 'report', 'pick', 'pickMany', 'input', 'createQuickPick', 'createInputBox', 'createStatusBarItem', 'createTreeView']);
/** Shown wherever they are: a language model tool's messages in VS Code's chat, a file dialog's button, a problem said to the person. */
const ALWAYS_SHOWN_PROPS = new Set(['problem', 'invocationMessage', 'pastTenseMessage', 'openLabel', 'saveLabel']);
const SHOWN_PROPS = new Set(['what', 'text', 'note', 'openLabel', 'saveLabel', 'title', 'prompt', 'placeHolder', 'placeholder', 'label', 'description', 'detail', 'tooltip', 'message', 'validationMessage', 'name']);
const ASSIGNED_PROPS = new Set(['text', 'tooltip', 'title', 'placeholder', 'prompt', 'description', 'message', 'validationMessage', 'label', 'name']);
const NEW_SHOWN = new Set(['TreeItem', 'MarkdownString', 'QuickInputButton']);
/** Nodes a string passes through on its way to where it is shown. */
const PASS_THROUGH = new Set(['ConditionalExpression', 'LogicalExpression', 'TSAsExpression', 'TSNonNullExpression', 'ArrayExpression', 'SpreadElement', 'ChainExpression']);

const calleeName = (callee) => (callee.type === 'MemberExpression' && callee.property.type === 'Identifier' ? callee.property.name : callee.type === 'Identifier' ? callee.name : undefined);
const isL10nCall = (node) => node?.type === 'CallExpression' && node.callee.type === 'MemberExpression' && calleeName(node.callee) === 't' && /(^|\.)l10n$/.test(sourceOf(node.callee.object));
let sourceOf = () => '';

function textOf(node) {
  if (node.type === 'Literal') return typeof node.value === 'string' ? node.value : undefined;
  if (node.type === 'TemplateLiteral') return node.quasis.map((q) => q.value.cooked).join(' ');
  return undefined;
}

/** Where the string ends up: a description of the sink, or undefined when it is not shown. */
function sinkOf(node) {
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
      if (parent.key.type !== 'Identifier' || !(SHOWN_PROPS.has(parent.key.name) || ALWAYS_SHOWN_PROPS.has(parent.key.name) || parent.key.name === 'validateInput')) return undefined;
      if (ALWAYS_SHOWN_PROPS.has(parent.key.name)) return parent.key.name;
      const holder = parent.parent.parent;
      const isItem = ['label', 'description', 'detail'].includes(parent.key.name) && parent.parent.properties.some((p) => p.type === 'Property' && p.key.type === 'Identifier' && p.key.name === 'label');
      if (isItem) return `a quick pick item's ${parent.key.name}`;
      if (holder?.type === 'Property' && holder.key.type === 'Identifier' && holder.key.name === 'confirmationMessages') return `confirmationMessages.${parent.key.name}`;
      property ??= parent.key.name;
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
      if (name && SHOW_CALLS.has(name)) return name;
      if (name && Object.hasOwn(HELPER_ARGS, name)) {
        const spec = HELPER_ARGS[name];
        if (spec.includes(index) || spec.some((s) => s < 0 && index >= -s - 1)) return name;
      }
      if (name && OBJECT_SINKS.has(name) && property) return `${name}({ ${property} })`;
      if (name === 'map' || name === 'filter' || name === 'flatMap' || name === 'concat') {
        // items made by a map: keep looking where the array goes
      } else return undefined;
    } else if (parent.type === 'NewExpression') {
      const name = calleeName(parent.callee);
      return name && NEW_SHOWN.has(name) && parent.arguments[0] === child ? `new ${name}` : undefined;
    } else if (parent.type === 'AssignmentExpression' && parent.right === child) {
      const target = parent.left;
      return target.type === 'MemberExpression' && target.property.type === 'Identifier' && ASSIGNED_PROPS.has(target.property.name) && !target.computed ? `.${target.property.name} =` : undefined;
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

function fixFor(node, source) {
  if (node.type === 'Literal') return `vscode.l10n.t(${quote(node.value)})`;
  const parts = [];
  node.quasis.forEach((q, i) => {
    parts.push(q.value.cooked.replace(/[{}]/g, (b) => (b === '{' ? '{{' : '}}')));
    if (i < node.expressions.length) parts.push(`{${i}}`);
  });
  const args = node.expressions.map((e) => source.getText(e));
  return `vscode.l10n.t(${[quote(parts.join('')), ...args].join(', ')})`;
}

export const l10nRule = {
  meta: {
    type: 'problem',
    fixable: 'code',
    docs: { description: 'Text shown to a person goes through vscode.l10n.t' },
    messages: { wrap: 'Text shown by {{sink}} goes through vscode.l10n.t, so it can be translated (l10n/bundle.l10n.*.json).' },
    schema: [],
  },
  create(context) {
    const source = context.sourceCode;
    sourceOf = (n) => source.getText(n);
    const check = (node) => {
      if (node.parent?.type === 'TaggedTemplateExpression' || node.parent?.type === 'ImportDeclaration' || node.parent?.type === 'ExportNamedDeclaration' || node.parent?.type === 'ExportAllDeclaration') return;
      const text = textOf(node);
      // An enum value (AUTO, V_3) is data, not text.
      if (text === undefined || !/[A-Za-z]{2}/.test(text.replace(/\$\([a-z-~]+\)/g, '')) || /^[A-Z0-9_]+$/.test(text)) return;
      const sink = sinkOf(node);
      if (!sink) return;
      context.report({ node, messageId: 'wrap', data: { sink }, fix: (f) => f.replaceText(node, fixFor(node, source)) });
    };
    return { Literal: check, TemplateLiteral: check };
  },
};
