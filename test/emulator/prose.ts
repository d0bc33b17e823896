/**
 * Answers that read like an assistant's: a heading on the topic, a direct opening, points as a
 * list, code in the language the question names, and for long answers paragraphs of sentences
 * (not word lists). Deterministic: the same question gives the same answer.
 */

const STOP = new Set(
  'a an and are as at be can could do does explain for from how i in is it me my of on or please should show tell that the this to what when where which who why will with would you your about into some few words long answer one just want need give write make'.split(
    ' ',
  ),
);

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

/** The words that carry the question's topic, in order. */
export function topicWords(question: string): string[] {
  return question
    .toLowerCase()
    .replace(/[`"'“”]/g, ' ')
    .split(/[^a-z0-9+#.-]+/)
    .map((w) => w.replace(/^[.-]+|[.-]+$/g, ''))
    .filter((w) => w.length > 1 && !STOP.has(w) && !/^\d+$/.test(w));
}

/** Words that say how to answer, not what about (kept out of headings and names). */
const GENERIC = new Set(
  'python typescript ts js javascript sql bash shell go golang rust function functions code example snippet script class method implement regex program'.split(
    ' ',
  ),
);

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function languageOf(question: string): { fence: string; name: string } {
  const q = question.toLowerCase();
  if (/\bpython\b|\.py\b/.test(q)) return { fence: 'python', name: 'Python' };
  if (/\bsql\b|\bquery\b.*\btable\b/.test(q)) return { fence: 'sql', name: 'SQL' };
  if (/\bbash\b|\bshell\b|\bcommand line\b|\bscript\b/.test(q)) return { fence: 'bash', name: 'a shell script' };
  if (/\bgo\b|\bgolang\b/.test(q)) return { fence: 'go', name: 'Go' };
  if (/\brust\b/.test(q)) return { fence: 'rust', name: 'Rust' };
  return { fence: 'ts', name: 'TypeScript' };
}

function identifier(words: string[]): string {
  const parts = words.filter((w) => /^[a-z][a-z0-9]*$/.test(w)).slice(0, 3);
  if (parts.length === 0) return 'example';
  return parts[0] + parts.slice(1).map(capital).join('');
}

function codeFor(question: string, words: string[]): string[] {
  const lang = languageOf(question);
  const fn = identifier(words);
  const snake = fn.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const body: Record<string, string[]> = {
    ts: [
      `/** ${capital(words.slice(0, 4).join(' ') || 'example')}: validate the input, then do the work. */`,
      `export function ${fn}(input: string): string {`,
      '  const value = input.trim();',
      `  if (!value) throw new Error('${fn}: input is empty');`,
      '  return value;',
      '}',
    ],
    python: [
      `def ${snake}(value: str) -> str:`,
      `    """${capital(words.slice(0, 4).join(' ') || 'example')}."""`,
      '    value = value.strip()',
      '    if not value:',
      `        raise ValueError("${snake}: value is empty")`,
      '    return value',
    ],
    sql: [
      `-- ${capital(words.slice(0, 4).join(' ') || 'example')}`,
      'SELECT id, name, created_at',
      `FROM ${snake}s`,
      "WHERE created_at >= CURRENT_DATE - INTERVAL '7 days'",
      'ORDER BY created_at DESC;',
    ],
    bash: [
      '#!/usr/bin/env bash',
      'set -euo pipefail',
      `# ${words.slice(0, 4).join(' ') || 'example'}`,
      'for file in "$@"; do',
      '  echo "processing $file"',
      'done',
    ],
    go: [
      `func ${capital(fn)}(input string) (string, error) {`,
      '\tvalue := strings.TrimSpace(input)',
      '\tif value == "" {',
      `\t\treturn "", errors.New("${fn}: input is empty")`,
      '\t}',
      '\treturn value, nil',
      '}',
    ],
    rust: [
      `pub fn ${snake}(input: &str) -> Result<String, String> {`,
      '    let value = input.trim();',
      '    if value.is_empty() {',
      `        return Err("${snake}: input is empty".into());`,
      '    }',
      '    Ok(value.to_string())',
      '}',
    ],
  };
  return ['', `Here is a small example in ${lang.name}:`, '', `\`\`\`${lang.fence}`, ...body[lang.fence], '```'];
}

const OPENERS = [
  'In short: keep each part small, make the failure modes explicit, and measure before you optimise.',
  'The short answer is that it depends on where the data comes from and how often it changes.',
  'Start from the behaviour you want to guarantee, then choose the simplest design that holds it.',
];

const SENTENCES = [
  'A gateway streams each answer as a series of events, so the client can show text as it arrives.',
  'Keeping the prompt prefix stable lets the cache serve most of the input at a fraction of the price.',
  'When a request fails, the error should say which field broke which rule and what to do next.',
  'Small modules with one job each are easier to test than a single file that mixes concerns.',
  'A timeout that fires between events catches a stalled stream without cutting a long answer short.',
  'Retries belong before the first byte arrives; after that, the partial answer is worth keeping.',
  'An index that writes only what changed stays fast as the workspace grows.',
  'Secrets belong in the system keychain, never in settings, logs or the messages a user can copy.',
  'Benchmarks with realistic data tell you more than tests that only check the happy path.',
  'The editor should stay responsive: expensive work runs after activation, in the background.',
];

/** About `count` words of prose, in paragraphs of three to four sentences. */
export function paragraphs(seed: number, count: number): string {
  const out: string[] = [];
  let words = 0;
  let sentences: string[] = [];
  for (let i = 0; words < count; i++) {
    const s = SENTENCES[(seed + i * 3) % SENTENCES.length];
    sentences.push(s);
    words += s.split(' ').length;
    if (sentences.length === 3 + (i % 2)) {
      out.push(sentences.join(' '));
      sentences = [];
    }
  }
  if (sentences.length) out.push(sentences.join(' '));
  return out.join('\n\n');
}

export interface ReplyInput {
  model: string;
  messages: number;
  question: string;
  images: number;
  /** `#words=N`: a long answer of about N words. */
  words?: number;
}

export function assistantReply(r: ReplyInput): string {
  const asked = r.question.trim();
  const all = topicWords(asked);
  const specific = all.filter((w) => !GENERIC.has(w));
  const words = specific.length > 0 ? specific : all;
  const seed = hash(asked);
  const topic = words.slice(0, 4).join(' ') || 'your question';
  const lines: string[] = [`## ${capital(topic)}`, '', OPENERS[seed % OPENERS.length]];
  if (r.images > 0)
    lines.push('', `I looked at the ${r.images === 1 ? 'image' : `${r.images} images`} you attached; ${r.images === 1 ? 'it' : 'they'} fit the question.`);
  lines.push(
    '',
    `- **What you asked:** “${asked.length > 160 ? `${asked.slice(0, 160)}…` : asked}”`,
    `- **Where to start:** ${capital(words[0] ?? 'the problem')} first, then ${words[1] ?? 'the details'}.`,
    `- **What to check:** the edge cases${words[2] ? ` around ${words[2]}` : ''}, and how it fails.`,
  );
  if (/\b(code|function|implement|example|snippet|script|class|sql|regex|write)\b/i.test(asked)) lines.push(...codeFor(asked, words));
  if (r.words) lines.push('', paragraphs(seed, r.words));
  lines.push('', `_**${r.model}** (emulated) read ${r.messages} message${r.messages === 1 ? '' : 's'}._`);
  return lines.join('\n');
}
