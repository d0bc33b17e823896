/**
 * Next-edit suggestions: after the person edits, the model proposes the edit that follows from it
 * anywhere in the visible part of the file (the other uses of a renamed variable, the matching
 * field in a constructor). What the person changed is kept per file as line-level edits between
 * pauses; the request shows those edits and the lines around the cursor, numbered; the answer is
 * one replacement, checked against the file before it is shown. No `vscode` here.
 */
import * as z from 'zod/mini';
import type { ChatCompletionRequest } from '../../gateway/resources/chat';

/** One settled edit: lines `line`… (0-based) were `before` and are now `after`. */
export interface LineEdit {
  line: number;
  before: string[];
  after: string[];
}

/** The edit between two texts of a file, as the lines that differ (common lines at both ends left out). */
export function lineEditBetween(previous: string, current: string): LineEdit | undefined {
  if (previous === current) return undefined;
  const a = previous.split('\n');
  const b = current.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  return { line: start, before: a.slice(start, endA), after: b.slice(start, endB) };
}

/**
 * The edits of one file since it was opened, settled at pauses: the text at the last pause is
 * kept, and the next pause turns the difference into one edit (a word typed letter by letter is
 * one edit, not five).
 */
export class EditHistory {
  private settled: string;
  private readonly edits: LineEdit[] = [];

  constructor(
    text: string,
    private readonly keep = 5,
  ) {
    this.settled = text;
  }

  /** Settles the text as it is now; the new edit, if the text changed since the last pause. */
  settle(text: string): LineEdit | undefined {
    const edit = lineEditBetween(this.settled, text);
    this.settled = text;
    if (!edit || edit.before.length + edit.after.length > 40) return undefined;
    this.edits.push(edit);
    if (this.edits.length > this.keep) this.edits.shift();
    return edit;
  }

  get recent(): readonly LineEdit[] {
    return this.edits;
  }
}

/** Lines of the file shown around the cursor (above and below). */
export const WINDOW_LINES = 40;
const MAX_ANSWER_TOKENS = 300;

export interface NextEditInput {
  model: string;
  path: string;
  language: string;
  text: string;
  /** 0-based. */
  cursorLine: number;
  edits: readonly LineEdit[];
}

export const NEXT_EDIT_INSTRUCTION = 'Predict the next edit.';

function editText(e: LineEdit): string {
  return [`@@ line ${e.line + 1}`, ...e.before.map((l) => `-${l}`), ...e.after.map((l) => `+${l}`)].join('\n');
}

/** The lines shown (0-based, inclusive `from`, exclusive `to`). */
export function windowOf(lineCount: number, cursorLine: number): { from: number; to: number } {
  const from = Math.max(0, cursorLine - WINDOW_LINES);
  return { from, to: Math.min(lineCount, cursorLine + WINDOW_LINES + 1) };
}

export function nextEditRequest(i: NextEditInput): ChatCompletionRequest {
  const lines = i.text.split('\n');
  const { from, to } = windowOf(lines.length, i.cursorLine);
  const numbered = lines
    .slice(from, to)
    .map((l, n) => `${from + n + 1}| ${l}`)
    .join('\n');
  const system = [
    'You predict the next edit a programmer makes, from the edits they just made. The likely next edit follows from them: the other uses of a renamed name, the matching parameter, field or call, the same change repeated.',
    'Answer with one JSON object and nothing else: {"line": the line number of the first line to change, "old": the exact current text of the line or lines to replace, "new": their replacement}. Answer {} when no edit follows from the recent ones.',
    'Never undo a recent edit. Change only lines shown.',
  ].join('\n');
  const user = [
    NEXT_EDIT_INSTRUCTION,
    '',
    `<recent_edits path="${i.path}">`,
    ...i.edits.map(editText),
    '</recent_edits>',
    '',
    `<file path="${i.path}" language="${i.language}" cursor_line="${i.cursorLine + 1}">`,
    numbered,
    '</file>',
  ].join('\n');
  return {
    model: i.model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    max_tokens: MAX_ANSWER_TOKENS,
    temperature: 0,
  };
}

/** A proposed edit, located: replace `start`–`end` (offsets in the file's text) with `text`. */
export interface NextEdit {
  start: number;
  end: number;
  text: string;
  /** 0-based line of `start`. */
  line: number;
}

const AnswerSchema = z.object({ line: z.optional(z.union([z.number(), z.string()])), old: z.optional(z.string()), new: z.optional(z.string()) });

/**
 * The model's answer as an edit in the file, or undefined: no edit proposed, an answer that is not
 * the JSON asked for, `old` not in the shown lines, no change, or an edit that undoes a recent one.
 */
export function parseNextEdit(answer: string, text: string, cursorLine: number, edits: readonly LineEdit[]): NextEdit | undefined {
  const json = /\{[\s\S]*\}/.exec(answer)?.[0];
  if (!json) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return undefined;
  }
  const parsed = AnswerSchema.safeParse(raw);
  if (!parsed.success || !parsed.data.old || parsed.data.new === undefined || parsed.data.old === parsed.data.new) return undefined;
  const { old, new: replacement } = parsed.data;
  const lines = text.split('\n');
  const { from, to } = windowOf(lines.length, cursorLine);
  const offsetOf = (line: number) => lines.slice(0, line).reduce((n, l) => n + l.length + 1, 0);
  const lo = offsetOf(from);
  const hi = offsetOf(to);
  const wanted = Number(parsed.data.line);
  const target = Number.isInteger(wanted) && wanted >= 1 ? offsetOf(Math.min(lines.length, wanted - 1)) : offsetOf(cursorLine);
  let best = -1;
  for (let at = text.indexOf(old, lo); at >= 0 && at + old.length <= hi; at = text.indexOf(old, at + 1)) {
    if (best < 0 || Math.abs(at - target) < Math.abs(best - target)) best = at;
  }
  if (best < 0) return undefined;
  // An edit that puts back what a recent edit took away is an undo, not a next edit.
  const undoes = edits.some((e) => e.before.join('\n').includes(replacement) && e.after.join('\n').includes(old) && replacement.trim() !== '');
  if (undoes) return undefined;
  // Only what differs is shown and replaced: `count` struck through and `total` beside it, not the whole line.
  let head = 0;
  while (head < old.length && head < replacement.length && old[head] === replacement[head]) head++;
  let tail = 0;
  while (tail < old.length - head && tail < replacement.length - head && old[old.length - 1 - tail] === replacement[replacement.length - 1 - tail]) tail++;
  const start = best + head;
  return { start, end: best + old.length - tail, text: replacement.slice(head, replacement.length - tail), line: text.slice(0, start).split('\n').length - 1 };
}
