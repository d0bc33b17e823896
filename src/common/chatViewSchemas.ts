/**
 * What the host sends the chat view, as zod/mini schemas the view checks each message against
 * on arrival. Only the view (and the tests) load this module: the host builds the messages and
 * needs only their types (re-exported by `chatProtocol.ts`).
 */
// Commands an error card may run (never an arbitrary command id from the webview).
import { FIX_COMMANDS } from './fixes';
import * as z from 'zod/mini';
import { ContextSchema, ImageSchema } from './chatProtocol';

const FixActionSchema = z.object({ title: z.string(), command: z.enum(FIX_COMMANDS) });
export type FixAction = z.infer<typeof FixActionSchema>;

const ProblemSchema = z.object({
  path: z.string(),
  line: z.number(),
  severity: z.enum(['error', 'warning']),
  message: z.string(),
  source: z.optional(z.string()),
  code: z.optional(z.string()),
});
const EditProblemsSchema = z.object({
  introduced: z.array(ProblemSchema),
  more: z.number(),
  fixed: z.number(),
  elsewhere: z.array(z.object({ path: z.string(), errors: z.number() })),
  waitedMs: z.number(),
  settled: z.enum(['diagnostics', 'unchanged', 'timeout']),
  unchecked: z.optional(z.array(z.string())),
  uncheckedBefore: z.optional(z.array(z.string())),
  server: z.optional(z.string()),
  lateMs: z.optional(z.number()),
});
const ToolCallSchema = z.looseObject({ id: z.string(), name: z.string(), args: z.string(), status: z.string(), problems: z.optional(EditProblemsSchema) });
const PlanSchema = z.array(z.object({ text: z.string(), status: z.enum(['pending', 'in-progress', 'done']) }));
const StepSchema = z.looseObject({
  text: z.string(),
  toolCalls: z.array(ToolCallSchema),
  thinking: z.optional(z.string()),
  thinkingMs: z.optional(z.number()),
});
const UsageSchema = z.looseObject({
  input: z.number(),
  output: z.number(),
  cacheRead: z.number(),
  cacheWrite: z.number(),
  reasoning: z.optional(z.number()),
  estimated: z.optional(z.boolean()),
});

/** An answer as the view draws it: checked for the fields the view reads, the rest passes. */
export const AssistantTurnSchema = z.looseObject({
  id: z.string(),
  role: z.literal('assistant'),
  model: z.string(),
  format: z.enum(['chat', 'messages', 'responses', 'gemini']),
  steps: z.array(StepSchema),
  status: z.enum(['streaming', 'done', 'stopped', 'error']),
  usage: UsageSchema,
  cost: z.optional(z.looseObject({ dollars: z.optional(z.number()), savedDollars: z.optional(z.number()), estimated: z.optional(z.boolean()) })),
  at: z.number(),
  error: z.optional(z.looseObject({ message: z.string(), kind: z.string(), continueWith: z.optional(z.string()) })),
  plan: z.optional(PlanSchema),
  mode: z.optional(z.string()),
  fallbacks: z.optional(z.array(z.looseObject({ from: z.string(), to: z.string(), label: z.string() }))),
  answeredBy: z.optional(z.string()),
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
  /** A command: where it will run once allowed (absent where there is no sandbox). */
  place: z.optional(z.enum(['sandbox', 'outside'])),
  /** A command: the hosts its network would be open to. */
  network: z.optional(z.array(z.string())),
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
  rules: z.optional(
    z.array(z.object({ path: z.string().check(z.maxLength(1000)), tokens: z.number(), memory: z.optional(z.boolean()) })).check(z.maxLength(100)),
  ),
  toolsOffered: z.optional(z.number()),
  toolsDeferred: z.optional(z.number()),
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
  formatChoice: z.enum(['auto', 'chat', 'messages', 'responses', 'gemini']),
  /** The format the current model uses. */
  format: z.enum(['chat', 'messages', 'responses', 'gemini']),
  /** The chat mode, and the modes the picker offers. */
  mode: z.string(),
  modes: z.array(z.object({ id: z.string(), name: z.string(), description: z.string() })),
  toolsEnabled: z.boolean(),
  configured: z.boolean(),
  busy: z.boolean(),
  conversations: z.array(z.object({ id: z.string(), title: z.string(), updatedAt: z.number() })),
  conversation: z.optional(
    z.object({
      id: z.string(),
      title: z.string(),
      turns: z.array(z.union([UserTurnSchema, AssistantTurnSchema])),
      condensations: z.optional(z.array(CondensationSchema)),
    }),
  ),
  /** For each errored turn id, the buttons that fix it. */
  fixes: z.record(z.string(), z.array(FixActionSchema)),
  pendingApprovals: z.array(ApprovalSchema),
  /** How the next (or last) request uses the model's context window: the meter. */
  context: z.optional(ContextUseSchema),
  /** What runs without asking now (the panel's indicator), or that everything asks (paused). */
  unasked: z.optional(UnaskedSchema),
  queued: z.optional(z.array(z.object({ id: z.string(), text: z.string(), steer: z.boolean(), images: z.number() }))),
});

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
