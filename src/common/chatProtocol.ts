/**
 * The messages between the chat webview and the extension host, as zod/mini schemas (small
 * enough for the browser bundle). The host validates everything the webview sends; the webview
 * checks what it receives the same way.
 */
// Commands an error card may run (never an arbitrary command id from the webview).
import { FIX_COMMANDS } from './fixes';
import * as z from 'zod/mini';
import type { ContextUse } from './contextUse';
import type { AssistantTurn, Turn } from './conversation';
import { formatCount } from './locale';

const MAX_IMAGE_BASE64 = Math.ceil((20 * 1024 * 1024 * 4) / 3) + 4;

export const ImageSchema = z.object({
  name: z.string().check(z.maxLength(255)),
  mediaType: z.enum(['image/png', 'image/jpeg', 'image/webp']),
  data: z.string().check(z.maxLength(MAX_IMAGE_BASE64), z.regex(/^[A-Za-z0-9+/]*={0,2}$/)),
  detail: z.enum(['auto', 'low', 'high']),
});

export const ContextSchema = z.object({
  label: z.string().check(z.maxLength(500)),
  text: z.string().check(z.maxLength(1024 * 1024)),
  language: z.optional(z.string().check(z.maxLength(50))),
});

/** The most of a tool call's arguments or result the view shows (its card cuts there too). */
export const VIEW_TEXT_LIMIT = 4_000;

function cut(text: string): string {
  return text.length > VIEW_TEXT_LIMIT ? `${text.slice(0, VIEW_TEXT_LIMIT)}\n… (${formatCount(text.length - VIEW_TEXT_LIMIT)} more characters)` : text;
}

/**
 * A turn as the view gets it: tool arguments and results cut to what a card shows, and an
 * accepted edit's file contents left out (the view only needs to know it can be undone). A long
 * agent session would otherwise send megabytes with every update.
 */
export function viewTurn<T extends Turn>(turn: T): T {
  if (turn.role !== 'assistant') return turn;
  return {
    ...turn,
    // Encrypted reasoning items stay in the host: the view has nothing to draw from them.
    steps: turn.steps.map(({ reasoningItems: _kept, ...s }) => ({
      ...s,
      toolCalls: s.toolCalls.map((c) => ({
        ...c,
        args: cut(c.args),
        ...(c.result !== undefined ? { result: cut(c.result) } : {}),
        ...(c.edit ? { edit: { path: c.edit.path, before: null, after: '' } } : {}),
        ...(c.edits ? { edits: c.edits.map((e) => ({ path: e.path, before: null, after: '' })) } : {}),
      })),
    })),
  };
}

export { FIX_COMMANDS };

const RequestId = z.string().check(z.maxLength(64));
const WorkspacePath = z.string().check(z.maxLength(1000));

export const FromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({
    type: z.literal('send'),
    text: z.string().check(z.maxLength(200_000)),
    images: z.array(ImageSchema).check(z.maxLength(10)),
    context: z.array(ContextSchema).check(z.maxLength(20)),
    /** Edit and resend: the user turn this question replaces (it and everything after it go). */
    replaces: z.optional(z.string().check(z.maxLength(100))),
    /** Whether the active editor's file or selection (the removable chip) goes with the question. */
    activeEditor: z.optional(z.boolean()),
  }),
  z.object({ type: z.literal('stop') }),
  z.object({ type: z.literal('retry') }),
  z.object({ type: z.literal('new-conversation') }),
  /** History actions carry a request id: the host answers each with a `result` (done, or why not). */
  z.object({ type: z.literal('open-conversation'), requestId: RequestId, id: z.string() }),
  z.object({ type: z.literal('rename-conversation'), requestId: RequestId, id: z.string(), title: z.string().check(z.minLength(1), z.maxLength(200)) }),
  z.object({ type: z.literal('delete-conversation'), requestId: RequestId, id: z.string() }),
  /** Condense by hand: older turns summarised by the model (answered by a `result`). */
  z.object({ type: z.literal('condense'), requestId: RequestId }),
  z.object({ type: z.literal('set-model'), model: z.string().check(z.maxLength(200)) }),
  z.object({ type: z.literal('set-format'), format: z.enum(['auto', 'chat', 'messages', 'responses']) }),
  /** The chat mode picked (Agent, Ask, Plan). */
  z.object({ type: z.literal('set-mode'), mode: z.string().check(z.maxLength(100)) }),
  /** A Plan-mode answer's plan approved: switch to Agent and carry it out. */
  z.object({ type: z.literal('approve-plan'), turnId: z.string().check(z.maxLength(100)) }),
  z.object({ type: z.literal('add-context') }),
  z.object({ type: z.literal('code-action'), action: z.enum(['copy', 'insert', 'save', 'apply']), code: z.string().check(z.maxLength(1024 * 1024)), language: z.optional(z.string().check(z.maxLength(50))) }),
  /** `@` or `#` typed in the input: workspace files matching the query, answered by `files`. */
  z.object({ type: z.literal('find-files'), requestId: RequestId, query: z.string().check(z.maxLength(200)) }),
  /** `/` at the start of the input: MCP prompts matching the query, answered by `files`. */
  z.object({ type: z.literal('find-prompts'), requestId: RequestId, query: z.string().check(z.maxLength(200)) }),
  /** An MCP prompt picked (`server/prompt`): its arguments are asked, its text comes back as `set-draft`. */
  z.object({ type: z.literal('use-prompt'), id: z.string().check(z.maxLength(300)) }),
  /** A file picked from the mention list: attached as context (through the path guard). */
  z.object({ type: z.literal('attach-file'), path: WorkspacePath }),
  z.object({ type: z.literal('approval'), callId: z.string(), accepted: z.boolean(), always: z.optional(z.boolean()) }),
  z.object({ type: z.literal('show-diff'), callId: z.string() }),
  /** Pause everything that runs without asking (or resume it). */
  z.object({ type: z.literal('toggle-pause') }),
  /** Undo one accepted edit (a tool call of a turn). */
  z.object({ type: z.literal('undo-edit'), turnId: z.string(), callId: z.string() }),
  /** Put every file a turn changed back to before it (created files removed). */
  z.object({ type: z.literal('restore-turn'), turnId: z.string() }),
  /** A file path in an answer or a tool card was clicked: open it (inside the workspace only). */
  z.object({ type: z.literal('open-file'), path: z.string().check(z.maxLength(1000)), line: z.optional(z.number().check(z.int(), z.minimum(1))) }),
  z.object({ type: z.literal('run-command'), command: z.enum(FIX_COMMANDS) }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

const FixActionSchema = z.object({ title: z.string(), command: z.enum(FIX_COMMANDS) });
export type FixAction = z.infer<typeof FixActionSchema>;

const ProblemSchema = z.object({ path: z.string(), line: z.number(), severity: z.enum(['error', 'warning']), message: z.string(), source: z.optional(z.string()), code: z.optional(z.string()) });
const EditProblemsSchema = z.object({
  introduced: z.array(ProblemSchema),
  more: z.number(),
  fixed: z.number(),
  elsewhere: z.array(z.object({ path: z.string(), errors: z.number() })),
  waitedMs: z.number(),
  settled: z.enum(['diagnostics', 'unchanged', 'timeout']),
});
const ToolCallSchema = z.looseObject({ id: z.string(), name: z.string(), args: z.string(), status: z.string(), problems: z.optional(EditProblemsSchema) });
const PlanSchema = z.array(z.object({ text: z.string(), status: z.enum(['pending', 'in-progress', 'done']) }));
const StepSchema = z.looseObject({ text: z.string(), toolCalls: z.array(ToolCallSchema), thinking: z.optional(z.string()), thinkingMs: z.optional(z.number()) });
const UsageSchema = z.looseObject({ input: z.number(), output: z.number(), cacheRead: z.number(), cacheWrite: z.number(), reasoning: z.optional(z.number()), estimated: z.optional(z.boolean()) });

/** An answer as the view draws it: checked for the fields the view reads, the rest passes. */
export const AssistantTurnSchema = z.looseObject({
  id: z.string(),
  role: z.literal('assistant'),
  model: z.string(),
  format: z.enum(['chat', 'messages', 'responses']),
  steps: z.array(StepSchema),
  status: z.enum(['streaming', 'done', 'stopped', 'error']),
  usage: UsageSchema,
  cost: z.optional(z.looseObject({ dollars: z.optional(z.number()), savedDollars: z.optional(z.number()), estimated: z.optional(z.boolean()) })),
  at: z.number(),
  error: z.optional(z.looseObject({ message: z.string(), kind: z.string() })),
  plan: z.optional(PlanSchema),
  mode: z.optional(z.string()),
});

export const UserTurnSchema = z.looseObject({
  id: z.string(),
  role: z.literal('user'),
  text: z.string(),
  images: z.array(ImageSchema),
  context: z.array(ContextSchema),
  at: z.number(),
});

const DiffLineSchema = z.object({ kind: z.enum([' ', '-', '+']), text: z.string() });
const ApprovalSchema = z.object({
  callId: z.string(),
  /** The file (edits), the folder a command runs in, or the server a tool belongs to. */
  path: z.string(),
  kind: z.enum(['create', 'edit', 'command', 'tool', 'sampling']),
  added: z.number(),
  removed: z.number(),
  preview: z.optional(z.object({ startLine: z.number(), lines: z.array(DiffLineSchema) })),
  warning: z.optional(z.string()),
  /** A command: the exact line; a tool: its name. */
  action: z.optional(z.string()),
  /** A tool call's arguments (JSON); a sampling request's messages (text). */
  args: z.optional(z.string()),
  /** A sampling request: the most it can cost ("at most $0.0012"). */
  price: z.optional(z.string()),
  /** Why it asks (a command not on the allow list, say). */
  reason: z.optional(z.string()),
  /** What "Always allow" would allow from now on, when it is offered. */
  always: z.optional(z.string()),
  /** Edits of several files accepted as one (a rename): those files. */
  files: z.optional(z.array(z.string())),
});

const ContextUseSchema = z.object({
  used: z.number(),
  window: z.number(),
  parts: z.object({ system: z.number(), tools: z.number(), history: z.number(), toolResults: z.number(), images: z.number() }),
  cut: z.number(),
  stubbed: z.number(),
  omittedTurns: z.number(),
  condensedTurns: z.optional(z.number()),
  reported: z.optional(z.boolean()),
  rules: z.optional(z.array(z.object({ path: z.string().check(z.maxLength(1000)), tokens: z.number() })).check(z.maxLength(100))),
});

const CondensationSchema = z.object({
  id: z.string(),
  summary: z.string(),
  throughTurnId: z.string(),
  throughSteps: z.optional(z.number()),
  tokensBefore: z.number(),
  tokensAfter: z.number(),
  model: z.string(),
  manual: z.boolean(),
  at: z.number(),
});
export type ViewCondensation = z.infer<typeof CondensationSchema>;

const UnaskedSchema = z.object({ paused: z.boolean(), parts: z.array(z.string()), waiting: z.optional(z.array(z.string())) });
export type Unasked = z.infer<typeof UnaskedSchema>;

export const ViewStateSchema = z.object({
  models: z.array(z.string()),
  model: z.string(),
  formatChoice: z.enum(['auto', 'chat', 'messages', 'responses']),
  /** The format the current model uses. */
  format: z.enum(['chat', 'messages', 'responses']),
  /** The chat mode, and the modes the picker offers. */
  mode: z.string(),
  modes: z.array(z.object({ id: z.string(), name: z.string(), description: z.string() })),
  toolsEnabled: z.boolean(),
  configured: z.boolean(),
  busy: z.boolean(),
  conversations: z.array(z.object({ id: z.string(), title: z.string(), updatedAt: z.number() })),
  conversation: z.optional(
    z.object({ id: z.string(), title: z.string(), turns: z.array(z.union([UserTurnSchema, AssistantTurnSchema])), condensations: z.optional(z.array(CondensationSchema)) }),
  ),
  /** For each errored turn id, the buttons that fix it. */
  fixes: z.record(z.string(), z.array(FixActionSchema)),
  pendingApprovals: z.array(ApprovalSchema),
  /** How the next (or last) request uses the model's context window: the meter. */
  context: z.optional(ContextUseSchema),
  /** What runs without asking now (the panel's indicator), or that everything asks (paused). */
  unasked: z.optional(UnaskedSchema),
});
export interface ViewState {
  models: string[];
  model: string;
  formatChoice: 'auto' | 'chat' | 'messages' | 'responses';
  /** The format the current model uses. */
  format: 'chat' | 'messages' | 'responses';
  mode: string;
  modes: { id: string; name: string; description: string }[];
  toolsEnabled: boolean;
  configured: boolean;
  busy: boolean;
  conversations: { id: string; title: string; updatedAt: number }[];
  conversation: { id: string; title: string; turns: Turn[]; condensations?: ViewCondensation[] } | undefined;
  /** For each errored turn id, the buttons that fix it. */
  fixes: Record<string, FixAction[]>;
  pendingApprovals: ApprovalInfo[];
  context?: ContextUse;
  unasked?: Unasked;
}

export type ApprovalInfo = z.infer<typeof ApprovalSchema>;


const FileItemSchema = z.object({ path: z.string(), name: z.string() });
export type FileItem = z.infer<typeof FileItemSchema>;

/** The file (and selection) in the active editor, offered as automatic context. */
/**
 * The active editor as the chip shows it. `withheld`: not sent with questions, and why (a file
 * that may hold secrets, or one the workspace's ignore rules exclude); attach it by hand instead.
 */
const ActiveEditorSchema = z.object({ path: z.string(), label: z.string(), tooLarge: z.boolean(), withheld: z.optional(z.enum(['secret', 'excluded'])) });
export type ActiveEditorInfo = z.infer<typeof ActiveEditorSchema>;

/** What the host sends the view: checked on arrival (`ToWebviewSchema`), like what the view sends. */
export const ToWebviewSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('state'), state: ViewStateSchema }),
  z.object({ type: z.literal('text'), turnId: z.string(), step: z.number().check(z.int(), z.minimum(0)), delta: z.string() }),
  z.object({ type: z.literal('turn'), turn: AssistantTurnSchema, fixes: z.optional(z.array(FixActionSchema)) }),
  z.object({ type: z.literal('approval'), ...ApprovalSchema.shape }),
  z.object({ type: z.literal('approval-done'), callId: z.string() }),
  z.object({ type: z.literal('attach'), images: z.array(ImageSchema), context: z.array(ContextSchema) }),
  z.object({ type: z.literal('notice'), level: z.enum(['info', 'error']), text: z.string() }),
  z.object({ type: z.literal('result'), requestId: z.string(), ok: z.boolean(), message: z.optional(z.string()) }),
  z.object({ type: z.literal('files'), requestId: z.string(), items: z.array(FileItemSchema) }),
  z.object({ type: z.literal('active-editor'), editor: z.nullable(ActiveEditorSchema) }),
  z.object({ type: z.literal('context'), use: ContextUseSchema }),
  /** Text for the input (an MCP prompt's), replacing what is there, with a note. */
  z.object({ type: z.literal('set-draft'), text: z.string(), note: z.string() }),
  /** A question that was not sent, back into the input, with the reason. */
  z.object({ type: z.literal('restore-draft'), text: z.string(), images: z.array(ImageSchema), context: z.array(ContextSchema), reason: z.string() }),
]);
export type ToWebview =
  | { type: 'state'; state: ViewState }
  | { type: 'text'; turnId: string; step: number; delta: string }
  | { type: 'turn'; turn: AssistantTurn; fixes?: FixAction[] }
  | ({ type: 'approval' } & ApprovalInfo)
  | { type: 'approval-done'; callId: string }
  | { type: 'attach'; images: z.infer<typeof ImageSchema>[]; context: z.infer<typeof ContextSchema>[] }
  | { type: 'notice'; level: 'info' | 'error'; text: string }
  | { type: 'result'; requestId: string; ok: boolean; message?: string }
  | { type: 'files'; requestId: string; items: FileItem[] }
  | { type: 'active-editor'; editor: ActiveEditorInfo | null }
  | { type: 'context'; use: ContextUse }
  | { type: 'set-draft'; text: string; note: string }
  | { type: 'restore-draft'; text: string; images: z.infer<typeof ImageSchema>[]; context: z.infer<typeof ContextSchema>[]; reason: string };

/** The type of every message the view can send (the e2e run checks each was driven). */
export const FROM_WEBVIEW_TYPES = FromWebview.def.options.map((o) => o.def.shape.type.def.values[0]);
