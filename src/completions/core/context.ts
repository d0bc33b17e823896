/**
 * What an inline completion sends: the code around the cursor cut at line boundaries to a token
 * budget, and, for models without fill-in-the-middle, the answer of a chat model cleaned down to
 * the hole (no fences, nothing repeated from before or after the cursor).
 */
import { tokensOf } from '../../runtime/core/tokens';

/** The end of `prefix` that fits `budget` tokens, starting at a line start (the cursor's line always whole). */
export function cutPrefix(prefix: string, budget: number): string {
  const lines = prefix.split('\n');
  const current = lines.pop() ?? '';
  let used = tokensOf(current);
  let start = lines.length;
  while (start > 0) {
    const cost = tokensOf(lines[start - 1]) + 1;
    if (used + cost > budget) break;
    used += cost;
    start--;
  }
  return [...lines.slice(start), current].join('\n');
}

/** The start of `suffix` that fits `budget` tokens, ending at a line end (the cursor's line always whole). */
export function cutSuffix(suffix: string, budget: number): string {
  const lines = suffix.split('\n');
  const current = lines.shift() ?? '';
  let used = tokensOf(current);
  let end = 0;
  while (end < lines.length) {
    const cost = tokensOf(lines[end]) + 1;
    if (used + cost > budget) break;
    used += cost;
    end++;
  }
  return [current, ...lines.slice(0, end)].join('\n');
}

/** The longest end of `a` that is a start of `b`. */
function overlap(a: string, b: string): number {
  for (let n = Math.min(a.length, b.length); n > 0; n--) if (a.endsWith(b.slice(0, n))) return n;
  return 0;
}

/**
 * A chat model's answer reduced to what goes in the hole: the code of its first fenced block (or
 * the whole answer), without the part of the line before the cursor it repeated, and without the
 * code after the cursor it repeated at its end.
 */
export function cleanChatAnswer(answer: string, prefix: string, suffix: string): string {
  let text = answer.replace(/\r\n/g, '\n');
  const fenced = /```[\w+-]*\n([\s\S]*?)(?:```|$)/.exec(text);
  if (fenced) text = fenced[1];
  text = text.replace(/^<(?:hole|fill|cursor)>|<\/(?:hole|fill|cursor)>$/g, '');
  const line = prefix.slice(prefix.lastIndexOf('\n') + 1);
  // The model wrote the whole line again: keep what comes after the cursor.
  if (line.trim() && text.startsWith(line)) text = text.slice(line.length);
  else if (line.trim() && text.trimStart().startsWith(line.trim())) text = text.trimStart().slice(line.trim().length);
  return withoutRepeatedSuffix(text, suffix);
}

/**
 * A completion cut where it starts repeating the code after the cursor: a model asked without
 * `suffix` (the prompt-only path, or a gateway that drops the field when it rewrites the request,
 * as one-api does for mapped models) goes on into code that is already there.
 */
export function withoutRepeatedSuffix(completion: string, suffix: string): string {
  let text = completion;
  const rest = suffix.replace(/^\s+/, '');
  if (rest) {
    const at = text.indexOf(rest.slice(0, Math.min(rest.length, 40)));
    if (at > 0 && rest.length >= 3) text = text.slice(0, at);
    else {
      const n = overlap(text, rest);
      if (n >= 3) text = text.slice(0, text.length - n);
    }
    // A short next line (a closing brace) repeated as the answer's last line.
    const nextLine = rest.split('\n')[0].trim();
    const lines = text.replace(/\s+$/, '').split('\n');
    if (lines.length > 1 && nextLine && lines[lines.length - 1].trim() === nextLine) text = lines.slice(0, -1).join('\n');
  }
  return text.replace(/\s+$/, (ws) => (ws.includes('\n') ? '' : ws));
}
