import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_RULE_CHARS, parseRule, RULE_SOURCES, ruleSourceOf, rulesSection, selectRules, type RuleFile, type RuleSource } from '../../src/runtime/core/rules';
import { systemPrompt } from '../../src/runtime/core/prompt';

const all = new Set<RuleSource>(RULE_SOURCES);
const files: RuleFile[] = [
  { path: 'AGENTS.md', text: 'Root: run npm test before you finish.' },
  { path: 'packages/api/AGENTS.md', text: 'API: handlers return typed errors.' },
  { path: 'packages/api/src/deep/AGENTS.md', text: 'Deep: no default exports.' },
  { path: '.github/copilot-instructions.md', text: 'Copilot: prefer small functions.' },
  { path: 'CLAUDE.md', text: 'Claude: British spelling in comments.' },
  { path: '.modelgateway/rules/tests.md', text: '---\nglobs: test/**/*.ts, **/*.test.ts\n---\nTests: one behaviour per it().' },
  { path: '.modelgateway/rules/style.md', text: 'Style: two spaces.' },
  { path: '.modelgateway/rules/sql.md', text: '---\nglobs:\n  - "**/*.sql"\n---\nSQL: upper-case keywords.' },
];
const paths = (inPlay: string[], enabled = all) => selectRules(files, inPlay, enabled).map((r) => r.path);

describe('project rules (src/runtime/core/rules.ts)', () => {
  it('knows each source by its path', () => {
    assert.equal(ruleSourceOf('AGENTS.md'), 'agents');
    assert.equal(ruleSourceOf('a/b/AGENTS.md'), 'agents');
    assert.equal(ruleSourceOf('.github/copilot-instructions.md'), 'copilot');
    assert.equal(ruleSourceOf('docs/.github/copilot-instructions.md'), undefined);
    assert.equal(ruleSourceOf('CLAUDE.md'), 'claude');
    assert.equal(ruleSourceOf('.modelgateway/rules/x.md'), 'project');
    assert.equal(ruleSourceOf('.modelgateway/rules/sub/x.md'), undefined);
    assert.equal(ruleSourceOf('README.md'), undefined);
  });

  it('reads globs front matter in its three spellings, and a file without it whole', () => {
    assert.deepEqual(parseRule('---\nglobs: a/**, *.ts\n---\nBody'), { globs: ['a/**', '*.ts'], body: 'Body' });
    assert.deepEqual(parseRule('---\nglobs: ["*.py", "*.pyi"]\n---\nBody'), { globs: ['*.py', '*.pyi'], body: 'Body' });
    assert.deepEqual(parseRule('---\ndescription: x\nglobs:\n  - "*.go"\n  - cmd/**\n---\r\nBody'), { globs: ['*.go', 'cmd/**'], body: 'Body' });
    assert.deepEqual(parseRule('---\ndescription: no globs\n---\nBody'), { body: 'Body' });
    assert.deepEqual(parseRule('Just text\n---\nnot front matter'), { body: 'Just text\n---\nnot front matter' });
  });

  it('takes the nearest AGENTS.md above each file in play, the root one with none', () => {
    assert.ok(paths([]).includes('AGENTS.md'));
    assert.ok(!paths([]).includes('packages/api/AGENTS.md'));
    const deep = paths(['packages/api/src/deep/x.ts']);
    assert.ok(deep.includes('packages/api/src/deep/AGENTS.md'));
    assert.ok(!deep.includes('packages/api/AGENTS.md'), 'only the nearest');
    assert.ok(!deep.includes('AGENTS.md'));
    const two = paths(['packages/api/src/handler.ts', 'README.md']);
    assert.ok(two.includes('packages/api/AGENTS.md') && two.includes('AGENTS.md'), 'each file its own nearest');
    assert.ok(!paths(['packages/apiary/x.ts']).includes('packages/api/AGENTS.md'), 'a folder prefix is not an ancestor');
  });

  it('applies a rules file with globs only to matching files, one without globs always', () => {
    assert.ok(paths(['src/a.ts']).includes('.modelgateway/rules/style.md'));
    assert.ok(!paths(['src/a.ts']).includes('.modelgateway/rules/tests.md'));
    assert.ok(paths(['test/unit/a.ts']).includes('.modelgateway/rules/tests.md'));
    assert.ok(paths(['src/a.test.ts']).includes('.modelgateway/rules/tests.md'));
    assert.ok(paths(['db/schema.sql']).includes('.modelgateway/rules/sql.md'));
  });

  it('leaves out the sources switched off, and keeps a stable order', () => {
    const some = paths(['src/a.ts'], new Set<RuleSource>(['copilot', 'project']));
    assert.deepEqual(some, ['.github/copilot-instructions.md', '.modelgateway/rules/style.md']);
    assert.deepEqual(paths(['src/a.ts']), paths(['src/a.ts']));
    assert.deepEqual(paths(['src/a.ts']), ['AGENTS.md', '.github/copilot-instructions.md', 'CLAUDE.md', '.modelgateway/rules/style.md']);
  });

  it('cuts a long file and the whole, and says so', () => {
    const long: RuleFile[] = [
      { path: 'AGENTS.md', text: 'a'.repeat(MAX_RULE_CHARS + 500) },
      { path: 'CLAUDE.md', text: 'b'.repeat(MAX_RULE_CHARS) },
      { path: '.github/copilot-instructions.md', text: 'c'.repeat(5000) },
    ];
    const rules = selectRules(long, [], all);
    assert.equal(rules[0].body.length, MAX_RULE_CHARS);
    assert.ok(rules[0].truncated);
    const total = rules.reduce((n, r) => n + r.body.length, 0);
    assert.ok(total <= 24_000, `${total} characters in all`);
    assert.match(rulesSection(rules), /\[… cut: the file is longer than the chat reads\]/);
  });

  it('goes into the system prompt after the safety rules, marked as the project’s words', () => {
    const section = rulesSection(selectRules(files, ['test/x.ts'], all));
    const prompt = systemPrompt({ folders: ['app'], toolsEnabled: true, rules: section, date: new Date('2026-01-01') });
    assert.ok(prompt.indexOf('Safety:') < prompt.indexOf('Project rules:'));
    assert.match(
      prompt,
      /<rules file="\.modelgateway\/rules\/tests\.md" applies-to="test\/\*\*\/\*\.ts, \*\*\/\*\.test\.ts">\nTests: one behaviour per it\(\)\.\n<\/rules>/,
    );
    assert.equal(
      systemPrompt({ folders: ['app'], toolsEnabled: true, rules: '', date: new Date('2026-01-01') }),
      systemPrompt({ folders: ['app'], toolsEnabled: true, date: new Date('2026-01-01') }),
    );
  });

  it('the setting offers exactly these sources, all on by default', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, { default: string[]; items: { enum: string[] } }> } };
    };
    const setting = pkg.contributes.configuration.properties['modelGateway.chat.projectRules'];
    assert.deepEqual(setting.items.enum, [...RULE_SOURCES]);
    assert.deepEqual(setting.default, [...RULE_SOURCES]);
  });
});
