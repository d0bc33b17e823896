import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2… */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .toLowerCase()
      .replace(/`/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

/** The relative links of a markdown file (outside code), images included. */
function linksOf(markdown: string): string[] {
  const text = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]).filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href));
}

/** What is wrong with each relative link of `file`: a missing file, or an anchor no heading makes. */
function brokenLinks(file: string, allowGenerated: boolean): string[] {
  const markdown = readFileSync(file, 'utf8');
  const broken: string[] = [];
  for (const href of linksOf(markdown)) {
    const [path, anchor] = href.split('#');
    const target = path ? join(dirname(file), decodeURIComponent(path)) : file;
    // Screenshots a test run writes (test-results/ is not committed): the guide names them as such.
    if (allowGenerated && relative(ROOT, target).startsWith('test-results/')) continue;
    if (!existsSync(target)) {
      broken.push(`${href}: no such file`);
      continue;
    }
    if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${href}: no heading makes #${anchor}`);
  }
  return broken;
}

describe('the documentation links', () => {
  it('every link of the README resolves in a fresh clone: a committed file, a heading that exists', () => {
    assert.deepEqual(brokenLinks(join(ROOT, 'README.md'), false), []);
  });

  it('every link of the docs resolves (screenshots a test run writes aside)', () => {
    const files = [
      join(ROOT, 'CHANGELOG.md'),
      ...readdirSync(join(ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => join(ROOT, 'docs', f)),
    ];
    const broken = files.flatMap((f) => brokenLinks(f, true).map((b) => `${relative(ROOT, f)}: ${b}`));
    assert.deepEqual(broken, []);
  });

  it('finds a broken link and a wrong anchor (the check itself)', () => {
    assert.deepEqual(anchorsOf("# A b\n## In VS Code's chat: `x`\n## A b\n```\n# not\n```"), new Set(['a-b', 'in-vs-codes-chat-x', 'a-b-1']));
    assert.deepEqual(linksOf('[a](docs/x.md#y) `[b](c)` ![i](p.png) [w](https://e.x)'), ['docs/x.md#y', 'p.png']);
  });

  it('the README stays a five-minute read (at most 1,500 words)', () => {
    const words = readFileSync(join(ROOT, 'README.md'), 'utf8').split(/\s+/).filter(Boolean).length;
    assert.ok(words <= 1500, `the README has ${words} words`);
  });
});
