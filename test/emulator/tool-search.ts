/**
 * How the emulator's model uses a client's tool search (`find_tools`), as a model offered a small
 * core of tools does: when the request needs a capability that none of the offered tools has
 * (problems, a rename, references, a definition, a task, a skill, an image, a named tool), it
 * calls `find_tools` first with words for what it needs, once per request; with the tools found
 * offered on the next step, it goes on as it would have with them from the start.
 */
import type { Plan, ToolSpec, Turn } from './assistant';

const FINDER = 'find_tools';

interface Capability {
  /** The request asks for it. */
  asks: RegExp;
  /** An offered tool that has it (by name); absent: a tool named by the query itself. */
  offeredAs?: RegExp;
  query: (m: RegExpExecArray) => string;
}

const CAPABILITIES: Capability[] = [
  {
    asks: /\bfix\b[^.?!]*\b(errors?|problems?|diagnostics|build|type errors?)\b/i,
    offeredAs: /problem|diagnostic/i,
    query: () => 'problems errors diagnostics',
  },
  { asks: /\b(?:use|with|follow) the ([\w-]+) skill\b/i, offeredAs: /skill/i, query: () => 'skill instructions' },
  { asks: /\brun (?:the )?(?:task\s+"[^"]+"|"[^"]+"\s+task)/i, offeredAs: /task/i, query: () => 'run a task' },
  { asks: /\brename\s+`?[\w$]+`?\s+to\s+`?[\w$]+`?/i, offeredAs: /rename/i, query: () => 'rename a symbol' },
  {
    asks: /\b(?:where is|where's)\s+`?[\w$.]+`?\s+(?:used|called|referenced)\b|\b(?:usages|uses|references|callers) (?:of|to)\s+`?[\w$.]+`?/i,
    offeredAs: /reference/i,
    query: () => 'find references usages',
  },
  { asks: /\b(?:where is|where's)\s+`?[\w$.]+`?\s+(?:defined|declared|implemented)\b/i, offeredAs: /definition/i, query: () => 'go to definition' },
  { asks: /\b(?:generate|draw|make|create)\b[^.?!]*\b(?:image|picture|logo|icon|illustration)\b/i, offeredAs: /image/i, query: () => 'generate an image' },
  { asks: /\b(?:read (?:it )?aloud|text to speech|speak)\b/i, offeredAs: /speech/i, query: () => 'text to speech' },
  // "Use the weather tool", "call `echo`": a tool by its own name that is not offered.
  {
    asks: /\b(?:use|call|run|invoke)\s+(?:the\s+)?`?([\w.-]+)`?\s+tool\b|\bcall\s+(?!(?:the|a|an|it|this|that|me)\b)`?([\w.-]+)`?/i,
    query: (m) => m[1] ?? m[2],
  },
];

function offeredByName(tools: ToolSpec[], word: string): boolean {
  const w = word.toLowerCase();
  return tools.some((t) => t.name.toLowerCase() === w || t.name.toLowerCase().endsWith(`__${w}`) || t.name.toLowerCase().includes(w));
}

/** A `find_tools` call when the request needs what no offered tool does; undefined otherwise. */
export function toolSearchPlan(request: string, since: Turn[], tools: ToolSpec[]): Plan | undefined {
  if (!tools.some((t) => t.name === FINDER)) return undefined;
  if (since.some((t) => t.toolCalls.includes(FINDER))) return undefined;
  for (const c of CAPABILITIES) {
    const m = c.asks.exec(request);
    if (!m) continue;
    const query = c.query(m);
    const missing = c.offeredAs ? !tools.some((t) => c.offeredAs!.test(t.name)) : !offeredByName(tools, query);
    if (!missing) return undefined;
    return { text: `I need a tool for that; looking for one (${query}).`, toolCalls: [{ name: FINDER, arguments: { query } }] };
  }
  return undefined;
}
