/**
 * How the emulator's model uses what an editor knows, as a model given those tools would:
 *
 * - An edit whose result names problems it introduced is followed by a fix: the language server's
 *   "Did you mean 'y'?" applied to the line the result quotes, else the edit taken back.
 * - "Fix the errors" asks `get_problems` first, then fixes one problem a step ("Did you mean"),
 *   asking again after each edit until none is left.
 * - "Use the X skill" asks `read_skill` first.
 * - "Rename X to Y" asks `rename_symbol`; 'run the task "X"' (or 'the "X" task') asks `run_task`.
 * - "Where is X used" (also "usages of X", "references to X") asks `find_references`;
 *   "where is X defined" asks `find_definition`.
 * - A request of several steps ("A, then B, then C"; a numbered list) starts with `update_plan`,
 *   does one step a round with the tools that step names, and marks the plan as it goes.
 */
import type { Plan, ToolSpec, Turn } from './assistant';

interface Context {
  request: string;
  /** The turns after the request (the rounds of this answer). */
  since: Turn[];
  tools: ToolSpec[];
  /** Tool calls for a piece of the request, as the general planner makes them. */
  callsFor: (text: string, round: number) => Plan['toolCalls'];
}

const has = (tools: ToolSpec[], name: string) => tools.some((t) => t.name === name);

/** The first `path:line: error: …` problem of a result that the server says how to fix, with its line's text. */
function suggestedFix(content: string): { path: string; old: string; fixed: string } | undefined {
  const re = /^([\w@./-]+):(\d+): (?:error|warning): Cannot find name '([\w$]+)'\. Did you mean '([\w$]+)'\?[^\n]*\n {4}(.+)$/gm;
  for (const m of content.matchAll(re)) {
    const [, path, , wrong, right, line] = m;
    const fixed = line.replace(new RegExp(`\\b${wrong.replace(/\$/g, '\\$')}\\b`), right);
    if (fixed !== line) return { path, old: line.trim(), fixed: fixed.trim() };
  }
  return undefined;
}

/** The request's steps, when it has several: "A, then B, then C" or a numbered list (quoted text is never split). */
export function requestSteps(request: string): string[] {
  const listed = [...request.matchAll(/^\s*\d+[.)]\s+(.+)$/gm)].map((m) => m[1].trim());
  if (listed.length >= 2) return listed;
  const quoted: string[] = [];
  const masked = request.replace(/#\w+=\d+/g, '').replace(/"[^"]*"|`[^`]*`/g, (q) => `\u{E000}${quoted.push(q) - 1}\u{E000}`);
  const parts = masked
    .split(/,?\s+(?:and\s+)?then\s+/i)
    .map((s) =>
      s
        .replace(/\u{E000}(\d+)\u{E000}/gu, (_m, i: string) => quoted[Number(i)])
        .trim()
        .replace(/[.!]$/, ''),
    )
    .filter(Boolean);
  return parts.length >= 2 ? parts : [];
}

export function editorPlan(o: Context): Plan | undefined {
  const lastRound = o.since.at(-1);
  const results = lastRound?.toolResults ?? [];
  const previous = [...o.since].reverse().find((t) => t.role === 'assistant');

  // An edit that introduced problems: fix them first.
  const broken = results.find(
    (r) => /^(replace_in_file|create_file|rename_symbol)$/.test(r.name) && !r.isError && /^Problems this edit introduced/m.test(r.content),
  );
  if (broken && has(o.tools, 'replace_in_file')) {
    const fix = suggestedFix(broken.content);
    if (fix)
      return {
        text: `That edit introduced a problem; fixing it: \`${fix.old}\` → \`${fix.fixed}\`.`,
        toolCalls: [{ name: 'replace_in_file', arguments: { path: fix.path, old_string: fix.old, new_string: fix.fixed } }],
      };
    const i = previous?.toolCalls.lastIndexOf('replace_in_file') ?? -1;
    const args = i >= 0 ? previous?.callArgs?.[i] : undefined;
    if (args && typeof args.old_string === 'string' && typeof args.new_string === 'string') {
      return {
        text: 'That edit introduced a problem; taking it back.',
        toolCalls: [{ name: 'replace_in_file', arguments: { path: args.path, old_string: args.new_string, new_string: args.old_string } }],
      };
    }
  }

  const fixing = /\bfix\b[^.?!]*\b(errors?|problems?|diagnostics|build|type errors?)\b/i.test(o.request) && has(o.tools, 'get_problems');
  if (fixing) {
    const path = /(?:in|of)\s+`?([\w@./-]+\.[A-Za-z0-9]{1,8})`?/.exec(o.request)?.[1];
    const problems = results.find((r) => r.name === 'get_problems');
    if (o.since.length === 0 || (results.some((r) => r.name === 'replace_in_file' && !r.isError) && !broken)) {
      return {
        text: o.since.length === 0 ? 'Let me see the problems first.' : 'Checking the problems again.',
        toolCalls: [{ name: 'get_problems', arguments: path ? { path } : {} }],
      };
    }
    if (problems && !problems.isError) {
      const fix = suggestedFix(problems.content);
      if (fix && has(o.tools, 'replace_in_file'))
        return {
          text: `Fixing \`${fix.path}\`: \`${fix.old}\` → \`${fix.fixed}\`.`,
          toolCalls: [{ name: 'replace_in_file', arguments: { path: fix.path, old_string: fix.old, new_string: fix.fixed } }],
        };
      if (/^No (errors|problems)/.test(problems.content)) return { text: `${problems.content.split('\n')[0]} Everything is fixed.`, toolCalls: [] };
    }
  }

  if (o.since.length === 0) {
    const used = /\b(?:where is|where's)\s+`?([\w$.]+)`?\s+(used|called|referenced)\b|\b(?:usages|uses|references|callers) (?:of|to)\s+`?([\w$.]+)`?/i.exec(
      o.request,
    );
    const defined = /\b(?:where is|where's)\s+`?([\w$.]+)`?\s+(?:defined|declared|implemented)\b/i.exec(o.request);
    const path = /\bin\s+`?([\w@./-]+\.[A-Za-z0-9]{1,8})`?/.exec(o.request)?.[1];
    const rename = /\brename\s+`?([\w$]+)`?\s+to\s+`?([\w$]+)`?/i.exec(o.request);
    const skill = /\b(?:use|with|follow) the ([\w-]+) skill\b/i.exec(o.request);
    if (skill && has(o.tools, 'read_skill'))
      return { text: `Reading the ${skill[1]} skill first.`, toolCalls: [{ name: 'read_skill', arguments: { name: skill[1] } }] };
    const task = /\brun (?:the )?(?:task\s+"([^"]+)"|"([^"]+)"\s+task)/i.exec(o.request);
    if (task && has(o.tools, 'run_task'))
      return { text: `Running the task "${task[1] ?? task[2]}".`, toolCalls: [{ name: 'run_task', arguments: { label: task[1] ?? task[2] } }] };
    if (rename && has(o.tools, 'rename_symbol'))
      return {
        text: `Renaming ${rename[1]} to ${rename[2]} everywhere.`,
        toolCalls: [{ name: 'rename_symbol', arguments: { symbol: rename[1], new_name: rename[2], ...(path ? { path } : {}) } }],
      };
    if (used && has(o.tools, 'find_references'))
      return { text: '', toolCalls: [{ name: 'find_references', arguments: { symbol: used[1] ?? used[3], ...(path ? { path } : {}) } }] };
    if (defined && has(o.tools, 'find_definition'))
      return { text: '', toolCalls: [{ name: 'find_definition', arguments: { symbol: defined[1], ...(path ? { path } : {}) } }] };
  }

  const steps = has(o.tools, 'update_plan') ? requestSteps(o.request) : [];
  const marked = o.since.reduce((n, t) => n + t.toolCalls.filter((c) => c === 'update_plan').length, 0);
  // Plan mode (a plan, and no tool that edits): look at the first step, write the plan, stop there.
  if (steps.length >= 2 && !has(o.tools, 'replace_in_file') && !has(o.tools, 'create_file')) {
    if (marked > 0)
      return {
        text: `The plan has ${steps.length} steps:\n\n${steps.map((s, i) => `${i + 1}. ${s}`).join('\n')}\n\nApprove it to carry it out.`,
        toolCalls: [],
      };
    const items = steps.map((text) => ({ text, status: 'pending' }));
    return {
      text: `Planning ${steps.length} steps.`,
      toolCalls: [{ name: 'update_plan', arguments: { items } }, ...o.callsFor(steps[0], 0).filter((c) => c.name !== 'update_plan')],
    };
  }
  if (steps.length >= 2) {
    if (marked > steps.length) return undefined;
    const items = steps.map((text, i) => ({ text, status: i < marked ? 'done' : i === marked ? 'in_progress' : 'pending' }));
    const work = marked < steps.length ? o.callsFor(steps[marked], marked).filter((c) => c.name !== 'update_plan') : [];
    return {
      text:
        marked === 0
          ? `This takes ${steps.length} steps; here is the plan.`
          : marked < steps.length
            ? `Step ${marked + 1} of ${steps.length}: ${steps[marked]}.`
            : 'All steps are done.',
      toolCalls: [{ name: 'update_plan', arguments: { items } }, ...work],
    };
  }
  return undefined;
}
