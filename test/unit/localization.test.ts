import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { ESLint } from 'eslint';
import { l10nRule } from '../../eslint/l10n-rule.mjs';

const ROOT = join(__dirname, '..', '..');
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
/** The placeholders a message carries, in a stable order: {0}, {1}…, codicons $(name), and `%key%`-free markdown links to commands. */
const placeholders = (s: string) => [...s.matchAll(/\{\d+\}|\$\([a-z~-]+\)|\(command:[\w.]+\)/g)].map((m) => m[0]).sort();

/** Every pair of English source and translation the extension ships. */
function translations(): { file: string; english: Record<string, string>; translated: Record<string, string> }[] {
  const out = [];
  const nls = json(join(ROOT, 'package.nls.json'));
  for (const f of readdirSync(ROOT).filter((f) => /^package\.nls\.[\w-]+\.json$/.test(f))) out.push({ file: f, english: nls, translated: json(join(ROOT, f)) });
  const bundle = json(join(ROOT, 'l10n', 'bundle.l10n.json'));
  const english = Object.fromEntries(Object.keys(bundle).map((k) => [k, k]));
  for (const f of readdirSync(join(ROOT, 'l10n')).filter((f) => /^bundle\.l10n\.[\w-]+\.json$/.test(f)))
    out.push({ file: `l10n/${f}`, english, translated: json(join(ROOT, 'l10n', f)) });
  return out;
}

describe('localization', function () {
  this.timeout(120_000);

  it('ships a Simplified Chinese translation of the manifest and of every string the extension shows', () => {
    const files = translations().map((t) => t.file);
    assert.ok(files.includes('package.nls.zh-cn.json') && files.includes('l10n/bundle.l10n.zh-cn.json'), files.join(', '));
  });

  it('every translation has every key, with the same placeholders, and no stale key', () => {
    for (const { file, english, translated } of translations()) {
      const missing = Object.keys(english).filter((k) => typeof translated[k] !== 'string' || !translated[k].trim());
      const stale = Object.keys(translated).filter((k) => !(k in english));
      const differ = Object.keys(english).filter((k) => k in translated && placeholders(english[k]).join() !== placeholders(translated[k]).join());
      assert.deepEqual({ file, missing, stale, differ }, { file, missing: [], stale: [], differ: [] });
    }
  });

  it('Chinese follows the glossary of docs/localization.md: the words one-api/new-api consoles use, and Chinese punctuation', () => {
    const zh = translations().filter((t) => /zh-cn/.test(t.file));
    const found: string[] = [];
    for (const { file, english, translated } of zh) {
      for (const [key, en] of Object.entries(english)) {
        const text = translated[key] ?? '';
        // 令牌 is what those consoles call an API key (令牌管理) and the access token (系统访问令牌): never an LLM token.
        if (/令牌/.test(text) && !/access token|API key|key or token|token to|"id": "token"/i.test(en))
          found.push(`${file}: 令牌 for "${en.slice(0, 60)}": ${text.slice(0, 60)}`);
        if (/\btokens?\b/i.test(en) && !/access token|key or token|"id": "token"/i.test(en) && /令牌/.test(text))
          found.push(`${file}: an LLM token as 令牌: ${text.slice(0, 60)}`);
        for (const word of ['线路格式', '线路']) if (text.includes(word)) found.push(`${file}: "${word}" (the wire format is 接口格式): ${text.slice(0, 60)}`);
        // Half-width parentheses around Chinese text (code, markdown link targets and codicons aside).
        const prose = text.replace(/`[^`]*`|\]\([^)]*\)|\$\([\w~-]+\)/g, 'CODE');
        if (/\([^()]*[\u4e00-\u9fff][^()]*\)/.test(prose)) found.push(`${file}: half-width parentheses around Chinese: ${text.slice(0, 80)}`);
        if (/ （|） (?=[\u4e00-\u9fff])/.test(prose)) found.push(`${file}: a space beside full-width parentheses: ${text.slice(0, 80)}`);
      }
    }
    assert.deepEqual(found, []);
  });

  it('the manifest names every contributed text by a key of package.nls.json', () => {
    const manifest = readFileSync(join(ROOT, 'package.json'), 'utf8');
    const nls = json(join(ROOT, 'package.nls.json'));
    const used = [...manifest.matchAll(/"%([^"%]+)%"/g)].map((m) => m[1]);
    assert.ok(used.length > 150, `only ${used.length} texts are localized`);
    assert.deepEqual(
      used.filter((k) => !(k in nls)),
      [],
    );
    assert.deepEqual(
      Object.keys(nls).filter((k) => !used.includes(k)),
      [],
      'package.nls.json holds keys the manifest no longer uses',
    );
    // Titles a person reads stay localizable: no command or view contributes a literal title.
    const c = (JSON.parse(manifest) as { contributes: { commands: { command: string; title: string }[] } }).contributes;
    assert.deepEqual(
      c.commands.filter((x) => !x.title.startsWith('%')).map((x) => x.command),
      [],
    );
  });

  it('l10n/bundle.l10n.json holds exactly the strings of the source (exported again by @vscode/l10n-dev)', () => {
    const out = mkdtempSync(join(tmpdir(), 'mg-l10n-'));
    try {
      execFileSync(process.execPath, [join(ROOT, 'node_modules', '@vscode', 'l10n-dev', 'dist', 'cli.js'), 'export', '--outDir', out, join(ROOT, 'src')], {
        stdio: 'ignore',
      });
      const fresh = Object.keys(json(join(out, 'bundle.l10n.json'))).sort();
      const committed = Object.keys(json(join(ROOT, 'l10n', 'bundle.l10n.json'))).sort();
      assert.deepEqual(
        { notCommitted: fresh.filter((k) => !committed.includes(k)), gone: committed.filter((k) => !fresh.includes(k)) },
        { notCommitted: [], gone: [] },
        'run `node scripts/l10n-sync.mjs` and translate what it lists',
      );
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

/** Lints one planted file with the l10n rule alone. */
async function plantText(path: string, code: string, profile: 'host' | 'webview'): Promise<string[]> {
  const tseslint = (await import('typescript-eslint')).default;
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [
      { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } },
      { files: ['**/*.ts'], plugins: { mg: { rules: { l10n: l10nRule } } }, rules: { 'mg/l10n': ['error', profile] } },
    ],
  });
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, path) });
  return (result?.messages ?? []).map((m) => `${m.line}: ${m.message}`);
}

describe('lint keeps shown text translatable (eslint/l10n-rule.mjs)', function () {
  this.timeout(60_000);

  it('refuses literal text in the places VS Code shows it', async () => {
    const planted = [
      "void vscode.window.showInformationMessage('Saved the file.');",
      "void vscode.window.showWarningMessage(`Deleted ${n} keys`, 'Undo');",
      "void vscode.window.showQuickPick(items, { title: 'Pick a model', placeHolder: 'Type to filter' });",
      "void vscode.window.showInputBox({ prompt: 'Your key', validateInput: (v) => (v ? undefined : 'Enter a key') });",
      "item.tooltip = 'Connected to the gateway';",
      "const node = new vscode.TreeItem('API Keys');",
      "const items = [{ label: 'Turn Off', run }];",
    ];
    const messages = await plantText('src/usage/host/planted.ts', planted.join('\n'), 'host');
    // One report per literal: 1 + 2 + 2 + 2 + 1 + 1 + 1.
    assert.equal(messages.length, 10, messages.join('\n'));
    for (let line = 1; line <= planted.length; line++)
      assert.ok(
        messages.some((m) => m.startsWith(`${line}:`)),
        `line ${line} passed: ${planted[line - 1]}`,
      );
  });

  it('lets through translated text, data, icons and enum values', async () => {
    const fine = [
      "void vscode.window.showInformationMessage(vscode.l10n.t('Saved {0}.', file));",
      "item.text = '$(sync~spin)';",
      "void pickOne(vscode.l10n.t('Style'), [{ label: 'AUTO' }, { label: 'DESIGN' }]);",
      "log.info('not shown: the log is for support');",
      "throw new Error('a tool result for the model');",
    ];
    assert.deepEqual(await plantText('src/usage/host/planted.ts', fine.join('\n'), 'host'), []);
  });

  it('checks the webviews too: element text, titles, aria labels, buttons', async () => {
    const planted = [
      "h('button', { title: 'Stop the answer', 'aria-label': 'Stop' }, 'Stop');",
      "el.textContent = 'Thinking';",
      "button('Retry', {}, 'refresh');",
      "h('span', { class: 'chip', text: l10n.t('Plan') });",
    ];
    const messages = await plantText('src/webview/planted.ts', planted.join('\n'), 'webview');
    assert.equal(messages.length, 5, messages.join('\n'));
    assert.ok(!messages.some((m) => m.startsWith('4:')), 'translated text was refused');
  });

  it('fixes a template into a message with placeholders', async () => {
    const tseslint = (await import('typescript-eslint')).default;
    const eslint = new ESLint({
      cwd: ROOT,
      overrideConfigFile: true,
      fix: true,
      overrideConfig: [
        { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } },
        { files: ['**/*.ts'], plugins: { mg: { rules: { l10n: l10nRule } } }, rules: { 'mg/l10n': ['error', 'host'] } },
      ],
    });
    const [result] = await eslint.lintText("void vscode.window.showErrorMessage(`Could not read ${file}: it's {odd}`);", {
      filePath: join(ROOT, 'src/usage/host/planted.ts'),
    });
    assert.equal(result?.output?.trim(), "void vscode.window.showErrorMessage(vscode.l10n.t('Could not read {0}: it\\'s {odd}', file));");
  });
});
