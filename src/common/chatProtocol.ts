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
import type { ActiveEditorInfo, ApprovalInfo, FileItem, FixAction, Unasked, ViewCondensation } from './chatViewSchemas';
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
        // A subagent's steps: what its card lists (calls by name and argument), never its tool results.
        ...(c.subagent
          ? {
              subagent: {
                ...c.subagent,
                task: cut(c.subagent.task),
                steps: c.subagent.steps.map((st) => ({
                  text: cut(st.text),
                  toolCalls: st.toolCalls.map((x) => ({
                    id: x.id,
                    name: x.name,
                    args: cut(x.args),
                    status: x.status,
                    ...(x.isError ? { isError: true } : {}),
                  })),
                })),
              },
            }
          : {}),
      })),
    })),
  };
}

export { FIX_COMMANDS };

const RequestId = z.string().check(z.maxLength(64));
const WorkspacePath = z.string().check(z.maxLength(1000));

function defineFromWebview() {
  return z.discriminatedUnion('type', [
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
    // A message queued while a turn runs: taken back into the input, removed, or steered into the running turn.
    z.object({ type: z.literal('queued'), action: z.enum(['edit', 'remove', 'steer']), id: z.string().check(z.maxLength(64)) }),
    z.object({ type: z.literal('retry') }),
    /** An answer that stopped mid-way on a busy model: go on with the next model of its chain (the host checks it is the turn's). */
    z.object({ type: z.literal('continue-with'), turnId: z.string().check(z.maxLength(100)), model: z.string().check(z.maxLength(200)) }),
    z.object({ type: z.literal('new-conversation') }),
    /** History actions carry a request id: the host answers each with a `result` (done, or why not). */
    z.object({ type: z.literal('open-conversation'), requestId: RequestId, id: z.string() }),
    z.object({ type: z.literal('rename-conversation'), requestId: RequestId, id: z.string(), title: z.string().check(z.minLength(1), z.maxLength(200)) }),
    z.object({ type: z.literal('delete-conversation'), requestId: RequestId, id: z.string() }),
    /** Condense by hand: older turns summarised by the model (answered by a `result`). */
    z.object({ type: z.literal('condense'), requestId: RequestId }),
    z.object({ type: z.literal('set-model'), model: z.string().check(z.maxLength(200)) }),
    z.object({ type: z.literal('set-format'), format: z.enum(['auto', 'chat', 'messages', 'responses', 'gemini']) }),
    /** The chat mode picked (Agent, Ask, Plan). */
    z.object({ type: z.literal('set-mode'), mode: z.string().check(z.maxLength(100)) }),
    /** A Plan-mode answer's plan approved: switch to Agent and carry it out. */
    z.object({ type: z.literal('approve-plan'), turnId: z.string().check(z.maxLength(100)) }),
    z.object({ type: z.literal('add-context') }),
    z.object({
      type: z.literal('code-action'),
      action: z.enum(['copy', 'insert', 'save', 'apply']),
      code: z.string().check(z.maxLength(1024 * 1024)),
      language: z.optional(z.string().check(z.maxLength(50))),
    }),
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
    // Start in Background: the text becomes an agent session in a git worktree of its own.
    z.object({ type: z.literal('background'), text: z.string().check(z.minLength(1), z.maxLength(200_000)) }),
    // Fork from here: a new conversation with the turns up to this answer.
    z.object({ type: z.literal('fork'), turnId: z.string().check(z.maxLength(100)) }),
    /** A file path in an answer or a tool card was clicked: open it (inside the workspace only). */
    z.object({ type: z.literal('open-file'), path: z.string().check(z.maxLength(1000)), line: z.optional(z.number().check(z.int(), z.minimum(1))) }),
    z.object({ type: z.literal('run-command'), command: z.enum(FIX_COMMANDS) }),
  ]);
}
let fromWebview: ReturnType<typeof defineFromWebview> | undefined;

/** What the view may send, checked by the host: built on first use (the host's start-up does not pay for it). */
export const fromWebviewSchema = () => (fromWebview ??= defineFromWebview());
export type FromWebview = z.infer<ReturnType<typeof defineFromWebview>>;

// The schemas of what the host sends are the view's alone (`chatViewSchemas.ts`); the host needs only their types.
export type { ActiveEditorInfo, ApprovalInfo, FileItem, FixAction, Unasked, ViewCondensation } from './chatViewSchemas';

export interface ViewState {
  models: string[];
  model: string;
  formatChoice: 'auto' | 'chat' | 'messages' | 'responses' | 'gemini';
  /** The format the current model uses. */
  format: 'chat' | 'messages' | 'responses' | 'gemini';
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
  /** Messages sent while a turn runs: sent in order when it ends, or (steer) added to its next request. */
  queued?: QueuedView[];
}

export interface QueuedView {
  id: string;
  text: string;
  /** Steer: it goes into the running turn's next request instead of waiting for its end. */
  steer: boolean;
  images: number;
}

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
export const fromWebviewTypes = () => fromWebviewSchema().def.options.map((o) => o.def.shape.type.def.values[0]);
