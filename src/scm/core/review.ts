/**
 * A review of a change: the request (the bounded diff, the project's rules) and the findings the
 * model answers, read with a schema. A finding names a file of the diff and a line of the file as
 * it is now; one that names anything else is dropped, as is a fix that does not say what to replace.
 */
import * as z from 'zod/mini';
import type { ChatCompletionRequest } from '../../gateway/resources/chat';

/** Tokens of diff one review reads at most; above `CONFIRM_TOKENS` the cost is shown first. */
export const REVIEW_DIFF_TOKENS = 40_000;
export const CONFIRM_TOKENS = 12_000;
const MAX_REVIEW_TOKENS = 2_000;

export const REVIEW_INSTRUCTION = 'Review these changes.';

export const SEVERITIES = ['error', 'warning', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

const RawFinding = z.object({
  path: z.string().check(z.minLength(1)),
  line: z.union([z.number(), z.string()]),
  severity: z.optional(z.unknown()),
  message: z.string().check(z.minLength(1)),
  fix: z.optional(z.unknown()),
});
const FixSchema = z.object({ old: z.string().check(z.minLength(1)), new: z.string() });

export interface Finding {
  path: string;
  /** 1-based, in the file as it is after the change. */
  line: number;
  severity: Severity;
  message: string;
  fix?: { old: string; new: string };
}

function findingOf(item: unknown): Finding | undefined {
  const raw = RawFinding.safeParse(item);
  if (!raw.success) return undefined;
  const line = Number(raw.data.line);
  if (!Number.isInteger(line) || line < 1) return undefined;
  const severity = typeof raw.data.severity === 'string' ? raw.data.severity.toLowerCase() : '';
  const fix = FixSchema.safeParse(raw.data.fix);
  return {
    path: raw.data.path,
    line,
    severity: (SEVERITIES as readonly string[]).includes(severity) ? (severity as Severity) : 'warning',
    message: raw.data.message.slice(0, 2_000),
    fix: fix.success ? fix.data : undefined,
  };
}

export interface ReviewInput {
  model: string;
  diff: string;
  /** What is reviewed, in words ("the working tree against HEAD", "feature against main"). */
  scope: string;
  rules: string;
}

export function reviewRequest(i: ReviewInput): ChatCompletionRequest {
  const system = [
    "You review code changes. Report real problems only: bugs, security holes, broken error handling, wrong or missing tests, and clear departures from the project's rules. No praise, no style nits a formatter would fix.",
    'Answer with a JSON array and nothing else. Each finding: {"path": file as in the diff, "line": line number in the file after the change, "severity": "error" | "warning" | "info", "message": what is wrong and why, in one or two sentences, "fix": optional {"old": exact text of the changed lines to replace, "new": its replacement}}.',
    'Only lines the diff adds or changes. An empty array when there is nothing to report.',
    ...(i.rules ? ['', i.rules] : []),
  ].join('\n');
  const user = [REVIEW_INSTRUCTION, '', `<diff scope="${i.scope}">\n${i.diff}</diff>`].join('\n');
  return {
    model: i.model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    max_tokens: MAX_REVIEW_TOKENS,
    temperature: 0,
  };
}

/**
 * The findings in an answer (a bare array, one in a code fence, or `{"findings": [...]}`), each
 * checked; those about files not in `paths` dropped. Undefined when the answer holds no JSON array.
 */
export function parseFindings(answer: string, paths: readonly string[]): Finding[] | undefined {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)\n```/.exec(answer)?.[1];
  const text = (fenced ?? answer).trim();
  const start = text.indexOf('[');
  const objectStart = text.indexOf('{');
  let raw: unknown;
  try {
    raw = JSON.parse(start >= 0 && (objectStart < 0 || start < objectStart) ? text.slice(start, text.lastIndexOf(']') + 1) : text);
  } catch {
    return undefined;
  }
  const list = Array.isArray(raw)
    ? raw
    : raw && typeof raw === 'object' && Array.isArray((raw as { findings?: unknown }).findings)
      ? (raw as { findings: unknown[] }).findings
      : undefined;
  if (!list) return undefined;
  const known = new Set(paths);
  const out: Finding[] = [];
  for (const item of list) {
    const finding = findingOf(item);
    if (!finding) continue;
    const path = finding.path.replace(/^[ab]\//, '').replace(/^\.\//, '');
    if (!known.has(path)) continue;
    out.push({ ...finding, path });
  }
  return out;
}

/** Why a fix was not made: its old text is no longer on its lines, or is there more than once. */
export type FixRefusal = 'moved' | 'ambiguous';

/**
 * Where a fix goes in a file's text: only at the finding's place, the lines from its `line`
 * (1-based) as many as the old text spans; never an occurrence elsewhere in the file. The old
 * text must be there once. Line ends follow the file's (a CRLF file gets CRLF in the new text).
 */
export function placeFix(
  text: string,
  line: number,
  fix: { old: string; new: string },
): { start: number; end: number; text: string } | { refused: FixRefusal } {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const old = fix.old.replace(/\r?\n/g, eol);
  // The finding's lines: from the start of `line` to the end of the last line the old text can reach.
  let from = 0;
  for (let i = 1; i < line; i++) {
    const next = text.indexOf('\n', from);
    if (next < 0) return { refused: 'moved' };
    from = next + 1;
  }
  let to = from;
  for (let i = 0; i < old.split('\n').length; i++) {
    const next = text.indexOf('\n', to);
    to = next < 0 ? text.length : next + 1;
  }
  const place = text.slice(from, to);
  const at = place.indexOf(old);
  if (at < 0) return { refused: 'moved' };
  if (place.indexOf(old, at + 1) >= 0) return { refused: 'ambiguous' };
  return { start: from + at, end: from + at + old.length, text: fix.new.replace(/\r?\n/g, eol) };
}

/** The file's text with the fix made at its place, or why it was not. */
export function applyFix(text: string, line: number, fix: { old: string; new: string }): string | { refused: FixRefusal } {
  const at = placeFix(text, line, fix);
  return 'refused' in at ? at : text.slice(0, at.start) + at.text + text.slice(at.end);
}

/** The fix as a reader checks it: the old lines with `-`, the new with `+` (a unified diff's body). */
export function fixPreview(fix: { old: string; new: string }): string {
  const lines = (t: string, mark: string) =>
    t === ''
      ? []
      : t
          .replace(/\r?\n$/, '')
          .split(/\r?\n/)
          .map((l) => `${mark}${l}`);
  return [...lines(fix.old, '-'), ...lines(fix.new, '+')].join('\n');
}
