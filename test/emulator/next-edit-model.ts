/**
 * What a model answers to the extension's next-edit request, read from the recent edits as a model
 * would: when the last edit renamed a name on its line (one identifier became another), the next
 * edit is the nearest line shown that still uses the old name, with it renamed; otherwise none.
 */

interface Edit {
  line: number;
  before: string[];
  after: string[];
}

function editsOf(text: string): Edit[] {
  const body = /<recent_edits[^>]*>\n([\s\S]*?)<\/recent_edits>/.exec(text)?.[1] ?? '';
  const out: Edit[] = [];
  for (const block of body.split(/^@@ line /m).filter(Boolean)) {
    const [head, ...rest] = block.split('\n');
    out.push({
      line: Number(head) - 1,
      before: rest.filter((l) => l.startsWith('-')).map((l) => l.slice(1)),
      after: rest.filter((l) => l.startsWith('+')).map((l) => l.slice(1)),
    });
  }
  return out;
}

/** The one identifier the edit changed on its line (`count` → `total`), if that is all it did. */
function renamed(e: Edit): { from: string; to: string } | undefined {
  if (e.before.length !== 1 || e.after.length !== 1) return undefined;
  const words = (l: string) => l.split(/([A-Za-z_$][\w$]*)/);
  const a = words(e.before[0]);
  const b = words(e.after[0]);
  if (a.length !== b.length) return undefined;
  const changed = a.map((w, i) => [w, b[i]] as const).filter(([x, y]) => x !== y);
  if (changed.length !== 1 || !/^[A-Za-z_$][\w$]*$/.test(changed[0][0]) || !/^[A-Za-z_$][\w$]*$/.test(changed[0][1])) return undefined;
  return { from: changed[0][0], to: changed[0][1] };
}

export function nextEditAnswer(userText: string): string | undefined {
  if (!userText.startsWith('Predict the next edit.')) return undefined;
  const file = /<file [^>]*cursor_line="(\d+)"[^>]*>\n([\s\S]*?)\n<\/file>/.exec(userText);
  const last = editsOf(userText).at(-1);
  const rename = last && renamed(last);
  if (!file || !rename) return '{}';
  const cursor = Number(file[1]);
  const uses = new RegExp(`(^|[^\\w$])${rename.from.replace(/\$/g, '\\$')}(?![\\w$])`);
  const lines = file[2]
    .split('\n')
    .map((l) => /^(\d+)\| ?(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => ({ n: Number(m[1]), text: m[2] }));
  const candidates = lines
    .filter((l) => uses.test(l.text))
    .sort((x, y) => (x.n >= cursor ? 0 : 1) - (y.n >= cursor ? 0 : 1) || Math.abs(x.n - cursor) - Math.abs(y.n - cursor));
  const next = candidates[0];
  if (!next) return '{}';
  const all = new RegExp(`(^|[^\\w$])${rename.from.replace(/\$/g, '\\$')}(?![\\w$])`, 'g');
  return JSON.stringify({ line: next.n, old: next.text, new: next.text.replace(all, `$1${rename.to}`) });
}
