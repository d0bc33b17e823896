/**
 * The delegating model: with `run_subagent` offered, "in parallel, find X and Y" hands each part to
 * a subagent, with a task that stands on its own (the subagent sees nothing of the conversation),
 * as a real model does. `#substeps=N` asks each subagent for N rounds of tool calls (the bench's
 * research task); the parent's own directives stay its own.
 */
import type { Plan, ToolSpec } from './assistant';

const VERB = /^(find|look up|check|search for|research|locate)\s+/i;

export function delegationPlan(text: string, tools: readonly ToolSpec[]): Plan | undefined {
  if (!tools.some((t) => t.name === 'run_subagent')) return undefined;
  const asked = /\bin parallel\b[,:]?\s*([\s\S]*)$/i.exec(text)?.[1];
  if (!asked) return undefined;
  const substeps = /#substeps=(\d{1,3})/.exec(text)?.[1];
  const body = asked
    .replace(/#\w+=\d+/g, '')
    .trim()
    .replace(/[.?!]+$/, '');
  const verb = (VERB.exec(body)?.[1] ?? 'find').toLowerCase();
  const parts = body
    .replace(VERB, '')
    .split(/\s*,\s*(?:and\s+)?|\s+and\s+/)
    .map((p) => p.trim())
    .filter(Boolean)
    .slice(0, 4);
  if (parts.length < 2) return undefined;
  return {
    text: `I'll hand these to ${parts.length} subagents, in parallel.`,
    toolCalls: parts.map((part) => {
      const term = /"([^"]+)"|`([^`]+)`/.exec(part);
      const query = term?.[1] ?? term?.[2] ?? part;
      return {
        name: 'run_subagent',
        arguments: {
          task: `Search the text "${query}" in the workspace and report where it appears, with paths and lines (the question: ${verb} ${part}).${substeps ? ` #steps=${substeps}` : ''}`,
          label: `${verb} ${part}`.slice(0, 60),
        },
      };
    }),
  };
}

/**
 * "Remember that …": the model writes it to memory with the scope the person implies — "for me",
 * "I prefer", "always" for the person; "this conversation", "for now" for the conversation; else the
 * repository — as a real model does when a memory tool is offered.
 */
export function memoryPlan(text: string, tools: readonly ToolSpec[]): Plan | undefined {
  if (!tools.some((t) => t.name === 'memory')) return undefined;
  const m = /\bremember\b[,:]?\s+(?:that\s+)?([\s\S]+)$/i.exec(text);
  if (!m) return undefined;
  const scope = /\b(this conversation|for now)\b/i.test(text)
    ? 'conversation'
    : /\b(for me|about me|I prefer|I like|my own|in every project|always)\b/i.test(text)
      ? 'user'
      : 'repository';
  const fact = m[1]
    .replace(/,?\s*\b(for this (repository|repo|project)|for me|in every project|for this conversation|for now)\b/gi, '')
    .trim()
    .replace(/[.!]+$/, '');
  const sentence = `${fact.charAt(0).toUpperCase()}${fact.slice(1)}.`;
  return { text: `I'll remember that (${scope}).`, toolCalls: [{ name: 'memory', arguments: { fact: sentence, scope } }] };
}
