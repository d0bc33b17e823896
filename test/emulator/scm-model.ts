/**
 * What a model answers to the extension's commit-message and review requests, read from the diff
 * as a model would: a subject in the repository's style naming what the diff adds, and review
 * findings for the mistakes a reviewer catches in added lines (`==` where `===` is meant in
 * JavaScript/TypeScript, a debugging `console.log`, a hard-coded secret), with a fix.
 */

interface DiffFile {
  path: string;
  added: { line: number; text: string }[];
}

/** The files of a unified diff with their added lines and those lines' numbers in the new file. */
function filesOf(diff: string): DiffFile[] {
  const out: DiffFile[] = [];
  let current: DiffFile | undefined;
  let line = 0;
  for (const l of diff.split('\n')) {
    const head = /^diff --git a\/(.+?) b\/(.+)$/.exec(l);
    if (head) {
      current = { path: head[2], added: [] };
      out.push(current);
      continue;
    }
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(l);
    if (hunk) {
      line = Number(hunk[1]);
      continue;
    }
    if (!current || l.startsWith('+++') || l.startsWith('---')) continue;
    if (l.startsWith('+')) current.added.push({ line: line++, text: l.slice(1) });
    else if (!l.startsWith('-') && !l.startsWith('\\')) line++;
  }
  return out;
}

function between(text: string, tag: string): string | undefined {
  return new RegExp(`<${tag}[^>]*>\\n([\\s\\S]*?)</${tag}>`).exec(text)?.[1];
}

/** The commit message for a "Write a commit message" request. */
function commitMessage(text: string): string {
  const diff = between(text, 'diff') ?? '';
  const subjects = (between(text, 'recent_subjects') ?? '')
    .split('\n')
    .map((l) => l.replace(/^- /, '').trim())
    .filter((l) => l && l !== '(no commits yet)');
  const files = filesOf(diff);
  const declared = files
    .flatMap((f) => f.added.map((a) => /\b(?:function|class|def|const|let|interface|type)\s+([A-Za-z_$][\w$]*)/.exec(a.text)?.[1]))
    .find(Boolean);
  const names = files.map((f) => f.path.split('/').pop()!);
  const what = declared ? `${declared} to ${names[0]}` : names.length ? names.slice(0, 2).join(' and ') : 'the changes';
  const verb = declared ? 'Add' : 'Update';
  // The repository's style: conventional commits when most recent subjects are, else plain.
  const conventional = subjects.length > 0 && subjects.filter((s) => /^\w+(\([^)]*\))?!?: /.test(s)).length * 2 > subjects.length;
  const subject = conventional ? `${declared ? 'feat' : 'chore'}: ${verb.toLowerCase()} ${what}` : `${verb} ${what}`;
  const body = files.length > 1 ? `\n\n${files.map((f) => `- ${f.path}: ${f.added.length} lines added`).join('\n')}` : '';
  return subject + body;
}

/** The findings for a "Review these changes" request (a JSON array, as the request asks). */
function reviewFindings(text: string): string {
  const findings: unknown[] = [];
  for (const f of filesOf(between(text, 'diff') ?? '')) {
    const js = /\.(ts|tsx|js|jsx|mjs|cjs)$/.test(f.path);
    for (const a of f.added) {
      if (js && /[^=!<>]==[^=]/.test(a.text)) {
        findings.push({
          path: f.path,
          line: a.line,
          severity: 'warning',
          message: '`==` compares after type coercion (`"0" == 0` is true); use `===`.',
          fix: { old: a.text, new: a.text.replace(/([^=!<>])==([^=])/g, '$1===$2') },
        });
      } else if (/\bconsole\.log\(/.test(a.text)) {
        findings.push({ path: f.path, line: a.line, severity: 'info', message: 'A debugging `console.log` left in the change.' });
      } else if (/(api[_-]?key|secret|password)\s*[:=]\s*['"][^'"]{8,}['"]/i.test(a.text)) {
        findings.push({
          path: f.path,
          line: a.line,
          severity: 'error',
          message: 'A credential is written into the source; read it from the environment or a secret store.',
        });
      }
    }
  }
  return '```json\n' + JSON.stringify(findings, null, 2) + '\n```';
}

/** The answer to one of the extension's source-control requests, or undefined for any other message. */
export function scmAnswer(userText: string): string | undefined {
  if (userText.startsWith('Write a commit message for these changes.')) return commitMessage(userText);
  if (userText.startsWith('Review these changes.')) return reviewFindings(userText);
  return undefined;
}
