/**
 * The conversation as the extension keeps it, independent of wire format: user turns with images
 * and context, assistant turns made of steps (text, thinking, tool calls with their results).
 * Stored as JSON; converted to chat-completions messages or messages-format params per request.
 */
export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/webp';

export interface ImageAttachment {
  name: string;
  mediaType: ImageMediaType;
  /** Base64 body. */
  data: string;
  detail: 'auto' | 'low' | 'high';
}

export interface ContextAttachment {
  /** Workspace-relative path, with a line range for selections. */
  label: string;
  text: string;
  language?: string;
}

export interface UserTurn {
  id: string;
  role: 'user';
  text: string;
  images: ImageAttachment[];
  context: ContextAttachment[];
  at: number;
  /** Only in what is sent: the summary of condensed turns, followed by a cache breakpoint. */
  pinned?: boolean;
  /** Only in what is sent: the server's compaction of the condensed turns, read in the Responses format by `serverModel`. */
  serverItems?: unknown[];
  serverModel?: string;
}

export type ToolCallStatus = 'running' | 'awaiting-approval' | 'done' | 'error' | 'rejected' | 'not-run';

export interface ToolCallRecord {
  id: string;
  name: string;
  /** JSON text of the arguments, as the model sent it. */
  args: string;
  status: ToolCallStatus;
  result?: string;
  isError?: boolean;
  /** For an accepted write: the file before and after, so it can be undone (null: it did not exist). */
  edit?: EditRecord;
  /** For an accepted change of several files at once (a rename): each file before and after. */
  edits?: EditRecord[];
  /** Set once the write was undone or restored away. */
  undone?: boolean;
  /** Gemini: the thought signature the model put on this call, sent back with it. */
  thoughtSignature?: string;
  /**
   * Sent as a short stub from now on (the result itself is kept): set when budgeting first stubs
   * it, so later requests of the loop send the same prefix and read it from the cache.
   */
  stubbed?: boolean;
  /** For an accepted edit: the problems (diagnostics) it introduced, read once they settled. */
  problems?: EditProblems;
  /**
   * Images the tool returned (an MCP server's screenshot, say), shown in the card; sent to a model
   * that takes images while the result is not stubbed (`sentImages`).
   */
  images?: ImageAttachment[];
  /** A `run_subagent` call: the subagent's own run (its steps are its context, never the parent's). */
  subagent?: SubagentRun;
  /** A command: where it ran (in the sandbox, or outside and why), said on its card. */
  placement?: CommandPlacement;
}

/** Where a command ran, as its card says it. */
export interface CommandPlacement {
  sandboxed: boolean;
  /** "ran in the sandbox", "ran outside the sandbox, approved"… */
  label: string;
  /** The hosts its network was open to. */
  hosts?: string[];
}

/**
 * A subagent's run, kept on the parent's tool call: its model, its steps (folded in the card),
 * what it used and cost. Only its final answer goes back to the parent as the call's result.
 */
export interface SubagentRun {
  /** A short name for the card ("callers of parseArgs"). */
  label: string;
  task: string;
  model: string;
  /** `queued`: waiting for a free slot (the parallel cap). */
  status: 'queued' | 'running' | 'done' | 'stopped' | 'error';
  steps: Step[];
  usage: Usage;
  cost?: TurnCost;
  error?: string;
  /** From its start (a slot free) to its end. */
  ms?: number;
  /** Busy models it left for the next of the chain, and each model's share of `usage` then. */
  fallbacks?: TurnFallback[];
  usageBy?: Record<string, Usage>;
}

/** Tool-result images sent at most, per call (the rest are named in the result's text). */
export const MAX_RESULT_IMAGES = 4;

/** A call's images as a request sends them: none once its result was stubbed. */
export function sentImages(c: ToolCallRecord): ImageAttachment[] {
  return c.stubbed || c.isError ? [] : (c.images ?? []).slice(0, MAX_RESULT_IMAGES);
}

/** Model names that read images, by family (a `modelOverrides` entry's `imageInput` says otherwise). */
const VISION = /gpt-4o|gpt-4\.1|gpt-5|o3|o4|claude|gemini|vision|-vl\b|llava|pixtral/i;

/** Whether a model takes image input: the person's override, else its family. */
export function takesImages(model: string, override?: boolean): boolean {
  return override ?? VISION.test(model);
}

/** Models that take no tool definitions: completion-only, embedding, media and early reasoning models. */
const NO_TOOLS = /(^|[/-])(o1-mini|o1-preview)\b|instruct\b|embed|rerank|moderation|\btts\b|whisper|dall-e|gpt-image|flux|sora|suno|midjourney|r1-distill/i;

/** Whether a model can be offered tools (a fallback with tool calls in its history skips one that cannot). */
export function takesTools(model: string): boolean {
  return !NO_TOOLS.test(model);
}

/** A problem (a diagnostic of a language server) as the chat keeps it. */
export interface ProblemRecord {
  /** Workspace-relative, as tools show paths. */
  path: string;
  /** 1-based. */
  line: number;
  severity: 'error' | 'warning';
  message: string;
  /** Who reported it (`ts`, `eslint`…). */
  source?: string;
  code?: string;
}

/** What an edit did to the problems of the files it touched, and of the other open files. */
export interface EditProblems {
  /** Problems the edit introduced, errors first (capped). */
  introduced: ProblemRecord[];
  /** How many more were introduced than `introduced` holds. */
  more: number;
  /** Problems that were there before and are gone now. */
  fixed: number;
  /** Other files whose errors grew with this edit. */
  elsewhere: { path: string; errors: number }[];
  /** From the write to the settled diagnostics, in milliseconds. */
  waitedMs: number;
  /** `timeout`: no language server answered in time on any edited file (nothing new is known). */
  settled: 'diagnostics' | 'unchanged' | 'timeout';
  /** Edited files whose problems after the edit are not known: no language server had reported on them in time. */
  unchecked?: string[];
  /** Edited files whose problems before the edit were not known: every problem now in them is listed. */
  uncheckedBefore?: string[];
  /** The language server waited for, when it has a name ("TypeScript"). */
  server?: string;
  /** Set on a report made after the edit's result went back: the server's first report came this long after the write (ms). */
  lateMs?: number;
}

/** One item of a plan the model keeps with `update_plan`. */
export interface PlanItem {
  text: string;
  status: 'pending' | 'in-progress' | 'done';
}

/** Every file a tool call changed (one for an edit, several for a rename). */
export function editsOf(call: ToolCallRecord): EditRecord[] {
  return call.edits ?? (call.edit ? [call.edit] : []);
}

/** A write the person accepted, kept with the turn: enough to put the file back exactly. */
export interface EditRecord {
  /** The path as tools show it (relative to the workspace). */
  path: string;
  before: string | null;
  after: string;
}

export interface Step {
  text: string;
  thinking?: string;
  thinkingSignature?: string;
  /** Responses format: the reasoning items of this step (encrypted), sent back with its tool calls. */
  reasoningItems?: { id: string; summary: string[]; encrypted?: string }[];
  /** How long the reasoning streamed (first to last thinking delta), and the reasoning tokens the gateway reported. */
  thinkingMs?: number;
  thinkingStartedAt?: number;
  /** Chat completions: the field the reasoning came in (`reasoning_content` when absent: the only shape stored before). */
  thinkingVia?: 'reasoning_content' | 'reasoning' | 'tags';
  /** Gemini: a thought signature that came on a text part, sent back with it. */
  textSignature?: string;
  /**
   * The model that wrote this step, when it is not the turn's (a fallback answered): what only
   * that model can read (signatures, encrypted reasoning) is not sent to another.
   */
  model?: string;
  toolCalls: ToolCallRecord[];
  /** Messages the person sent with Steer while this step's tools ran: they follow its results in the next request. */
  steered?: string[];
}

/** How a steering message reads to the model, after the tool results it came with. */
export function steeringText(texts: readonly string[]): string {
  return `[The person added while you were working:]\n${texts.join('\n\n')}`;
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Of the output, the tokens spent reasoning (when the gateway reports them). */
  reasoning?: number;
  /** True when a reply came without usage and its tokens were estimated from the text. */
  estimated?: boolean;
}

export interface TurnCost {
  /** Dollars; absent when the model has no known price. */
  dollars?: number;
  /** What prompt-cache reads saved, net of the writes' surcharge. */
  savedDollars?: number;
  /** Where the price came from. */
  source: 'settings' | 'gateway' | 'unknown';
  /** True when the gateway sent no usage and the tokens were estimated from the text. */
  estimated: boolean;
}

export interface TurnError {
  message: string;
  /** The error's class name (AuthenticationError, PermissionDeniedError, …). */
  kind: string;
  status?: number;
  cause403?: string;
  keyRefusal?: string;
  retryAfterMs?: number;
  /** The answer stopped mid-way on a busy or silent model: the next model of the chain, offered to continue with. */
  continueWith?: string;
}

/** A busy model left for the next one of the person's chain (`src/runtime/core/fallback.ts`). */
export interface TurnFallback {
  from: string;
  to: string;
  /** rate-limit, no-channel, overloaded, server-error, stalled. */
  kind: string;
  status?: number;
  /** "503: no available channel". */
  label: string;
  at: number;
}

const USAGE_KEYS = ['input', 'output', 'cacheRead', 'cacheWrite'] as const;

/**
 * Each model's share of an answer's usage: the one model, or after a fallback each that answered,
 * what no model was given yet (the tokens since the last switch, while the turn runs) counted to
 * the model answering now.
 */
export function usageParts(turn: Pick<AssistantTurn, 'model' | 'usage' | 'usageBy'> & { answeredBy?: string }): [string, Usage][] {
  if (!turn.usageBy || Object.keys(turn.usageBy).length === 0) return [[turn.model, turn.usage]];
  const parts = new Map(Object.entries(turn.usageBy).map(([m, u]): [string, Usage] => [m, { ...u }]));
  const rest: Usage = { ...turn.usage };
  for (const u of parts.values()) for (const k of USAGE_KEYS) rest[k] = Math.max(0, rest[k] - u[k]);
  if (USAGE_KEYS.some((k) => rest[k] > 0)) {
    const now = turn.answeredBy ?? turn.model;
    const mine = parts.get(now) ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
    for (const k of USAGE_KEYS) mine[k] += rest[k];
    parts.set(now, mine);
  }
  return [...parts.entries()];
}

/** Gives `model` what of the turn's usage no model has been given yet (at a switch, and at the end of a turn that switched). */
export function attributeUsage(turn: AssistantTurn, model: string): void {
  const by = (turn.usageBy ??= {});
  const given = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
  for (const u of Object.values(by)) {
    for (const k of USAGE_KEYS) given[k] += u[k];
    given.reasoning += u.reasoning ?? 0;
  }
  const mine = (by[model] ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
  for (const k of USAGE_KEYS) mine[k] += Math.max(0, turn.usage[k] - given[k]);
  const reasoning = Math.max(0, (turn.usage.reasoning ?? 0) - given.reasoning);
  if (reasoning) mine.reasoning = (mine.reasoning ?? 0) + reasoning;
  if (turn.usage.estimated) mine.estimated = true;
}

export interface AssistantTurn {
  id: string;
  role: 'assistant';
  model: string;
  format: WireFormat;
  steps: Step[];
  status: 'streaming' | 'done' | 'stopped' | 'error';
  error?: TurnError;
  usage: Usage;
  /** What the answer cost, from its usage and the model's price (set when it ends). */
  cost?: TurnCost;
  /** True when the loop ended at the step limit. */
  stepLimitReached?: boolean;
  /** The plan the model wrote with `update_plan` (its newest version). */
  plan?: PlanItem[];
  /** The chat mode the turn ran in (`agent` when absent), or a custom agent's id. */
  mode?: string;
  /** Busy models the turn left for the next of the chain, in order; `answeredBy` is the last one's model. */
  fallbacks?: TurnFallback[];
  /** The model that answered when a fallback did (`model` stays the one asked first). */
  answeredBy?: string;
  /** After a fallback: each model's share of `usage` (priced at its own model's price). */
  usageBy?: Record<string, Usage>;
  at: number;
}

export type Turn = UserTurn | AssistantTurn;

export interface Conversation {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  turns: Turn[];
  /** Summaries that replace older turns in what is sent, oldest first (only the newest applies). */
  condensations?: Condensation[];
  /** Tools `find_tools` (or a mention) loaded, in the order they were: offered for the rest of the conversation. */
  toolsLoaded?: string[];
  /** Facts the agent was asked to remember for this conversation (the `memory` tool's conversation scope). */
  memory?: string[];
  /** Made with Fork from here: the conversation and the answer it was forked at. */
  forkOf?: { id: string; turnId: string };
}

/**
 * Older turns summarised by the model. What is sent starts with the summary; the stored turns stay
 * whole and on screen.
 */
export interface Condensation {
  id: string;
  summary: string;
  /** The last turn the summary covers. */
  throughTurnId: string;
  /** When the cut fell inside an answer (a long agent loop): how many of its steps are covered. */
  throughSteps?: number;
  /** Estimated tokens of what the summary replaced, and of the summary. */
  tokensBefore: number;
  tokensAfter: number;
  model: string;
  manual: boolean;
  at: number;
  /**
   * Where the gateway compacted the turns (`/v1/responses/compact`): its output, opaque, sent in
   * place of the summary to the same model in the Responses format. `summary` is then an excerpt
   * of the covered turns, for any other model or format.
   */
  serverItems?: unknown[];
}

/**
 * The condensation that applies: the newest whose last turn is still in the conversation (a retry
 * or an edit-and-resend can remove turns a newer summary ended with).
 */
export function activeCondensation(c: Pick<Conversation, 'turns' | 'condensations'>): Condensation | undefined {
  const ids = new Set(c.turns.map((t) => t.id));
  return [...(c.condensations ?? [])].reverse().find((k) => ids.has(k.throughTurnId));
}

export type WireFormat = 'chat' | 'messages' | 'responses' | 'gemini';
export type FormatChoice = WireFormat | 'auto';

/** new-api's `supported_endpoint_types` value for each wire format. */
export const ENDPOINT_TYPE: Record<WireFormat, string> = { chat: 'openai', messages: 'anthropic', responses: 'openai-response', gemini: 'gemini' };

/** What is known of a model beyond its id: the user's override, the gateway's endpoint list, a gateway without /v1/responses. */
export interface FormatFacts {
  /** `modelGateway.modelOverrides.<model>.api`. */
  override?: WireFormat;
  /** The model's `supported_endpoint_types` from `/api/pricing` (unknown when absent). */
  endpoints?: readonly string[];
  /** This gateway answered 404 for `/v1/responses`. */
  noResponsesRoute?: boolean;
  /** This gateway answered 404 for `/v1beta/models/…` (Gemini's own format). */
  noGeminiRoute?: boolean;
  /** This gateway answered 404 for `/v1/responses/compact`: condensing asks the model for a summary. */
  noCompactRoute?: boolean;
}

/**
 * The wire format for a model, decided per model and never from its name alone: a choice made in
 * the chat, else the user's override, else the formats the gateway lists for the model (the
 * user's messages pattern picks among them; chat completions first, then messages, then
 * responses), else chat completions. A gateway without `/v1/responses` falls back to chat.
 */
export function resolveFormat(model: string, choice: FormatChoice, pattern: string, facts: FormatFacts = {}): WireFormat {
  const usable = (f: WireFormat) => !(f === 'responses' && facts.noResponsesRoute) && !(f === 'gemini' && facts.noGeminiRoute);
  if (choice !== 'auto') return usable(choice) ? choice : 'chat';
  if (facts.override) return usable(facts.override) ? facts.override : 'chat';
  // Gemini's own format only where the gateway lists it for the model (one-api has no /v1beta).
  const listed = (f: WireFormat) =>
    usable(f) && (f === 'gemini' ? !!facts.endpoints?.includes(ENDPOINT_TYPE.gemini) : !facts.endpoints?.length || facts.endpoints.includes(ENDPOINT_TYPE[f]));
  let prefersMessages: boolean;
  try {
    prefersMessages = new RegExp(pattern, 'i').test(model);
  } catch {
    prefersMessages = /claude/i.test(model);
  }
  if (prefersMessages && listed('messages')) return 'messages';
  // A Gemini model in its own format where offered: thinking, its summaries and the signatures a
  // tool round needs, which chat completions cannot carry.
  if (/gemini/i.test(model) && listed('gemini')) return 'gemini';
  for (const f of ['chat', 'messages', 'responses', 'gemini'] as const) if (listed(f)) return f;
  return 'chat';
}

export function emptyUsage(): Usage {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
}

/** An id that sorts by time and cannot be guessed: the random part comes from crypto. */
export function newId(prefix: string): string {
  const random = Array.from(globalThis.crypto.getRandomValues(new Uint8Array(6)), (b) => b.toString(16).padStart(2, '0')).join('');
  return `${prefix}_${Date.now().toString(36)}${random}`;
}

/** A title from the first user message: its first line, shortened. */
export function titleFrom(text: string): string {
  const line = text.trim().split('\n')[0].replace(/\s+/g, ' ');
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || 'New conversation';
}

/** Ids that name embedding, speech, image, video or task models (new-api's `suno_music`, `mj_imagine`), by the names gateways give them. */
const NON_CHAT = /embed|rerank|moderation|tts|whisper|transcribe|sora|veo|dall-e|imagegen|^V_\d|^suno_|^mj_|^swap_face$/i;

/** Whether a model of the gateway's list is a chat model (offered in the chat and to VS Code). */
export function isChatModel(id: string): boolean {
  return !NON_CHAT.test(id);
}
