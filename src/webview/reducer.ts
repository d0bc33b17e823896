/**
 * The view's state changes that need no DOM: which turns to add, update or remove when the host's
 * copy arrives, where a reported turn goes, and which attachments are new. Pure, so they are
 * unit-tested in Node; main.ts applies the plans to the page.
 */
import type { ContextAttachment, ImageAttachment } from '../common/conversation';

interface HasId {
  id: string;
}

export type ReconcilePlan<T extends HasId> =
  /** The order changed in the middle (or a turn moved): draw the thread again. */
  | { kind: 'redraw'; turns: T[] }
  /** Only additions at the end and removals: the rest stays on the page untouched. */
  | { kind: 'patch'; remove: string[]; add: T[]; update: T[] };

/**
 * How to bring the shown turns in line with the host's list. New turns come only at the end (a
 * retry or an edit removes the last ones first); anything else is a redraw.
 */
export function planReconcile<T extends HasId>(shown: readonly T[], next: readonly T[]): ReconcilePlan<T> {
  const known = new Set(shown.map((t) => t.id));
  const kept = next.filter((t) => known.has(t.id)).map((t) => t.id);
  const order = shown.map((t) => t.id).filter((id) => kept.includes(id));
  const appendedOnly = next.slice(0, kept.length).every((t, i) => t.id === order[i]);
  if (!appendedOnly) return { kind: 'redraw', turns: [...next] };
  const ids = new Set(next.map((t) => t.id));
  return {
    kind: 'patch',
    remove: shown.filter((t) => !ids.has(t.id)).map((t) => t.id),
    add: next.filter((t) => !known.has(t.id)),
    update: next.filter((t) => known.has(t.id)),
  };
}

/** A turn the host reports on its own: replaced where it is, or added at the end. */
export function upsertTurn<T extends HasId>(turns: readonly T[], turn: T): T[] {
  const i = turns.findIndex((t) => t.id === turn.id);
  return i >= 0 ? turns.map((t, j) => (j === i ? turn : t)) : [...turns, turn];
}

/** Attachments with the incoming ones added, each kept once (same image bytes, same label and text). */
export function mergeAttachments(
  current: { images: readonly ImageAttachment[]; context: readonly ContextAttachment[] },
  incoming: { images: readonly ImageAttachment[]; context: readonly ContextAttachment[] },
): { images: ImageAttachment[]; context: ContextAttachment[] } {
  const images = [...current.images];
  for (const img of incoming.images) if (!images.some((x) => x.data === img.data)) images.push(img);
  const context = [...current.context];
  for (const c of incoming.context) if (!context.some((x) => x.label === c.label && x.text === c.text)) context.push(c);
  return { images, context };
}

type ActiveEditor = { label: string; path: string; tooLarge: boolean; withheld?: 'secret' | 'excluded' };

/** The automatic context chip (the active editor's file): unless removed for this file, or attached by hand. */
export function activeEditorChip<T extends ActiveEditor>(
  active: T | null,
  dismissedPath: string | undefined,
  context: readonly ContextAttachment[],
): T | undefined {
  if (!active || dismissedPath === active.path) return undefined;
  return context.some((c) => c.label === active.label) ? undefined : active;
}

/** Whether the active editor goes with the question: its chip is shown, the file is not too large and not withheld. */
export function includeActiveEditor(active: ActiveEditor | null, dismissedPath: string | undefined, context: readonly ContextAttachment[]): boolean {
  const chip = activeEditorChip(active, dismissedPath, context);
  return !!chip && !chip.tooLarge && !chip.withheld;
}

/** The mention being typed just before the cursor: its start in the text and its query. */
export function mentionAt(text: string, cursor: number): { start: number; query: string; trigger: '@' | '/' } | undefined {
  // `/` only as the first character of the input: an MCP prompt.
  const slash = /^\/([\w./:-]{0,200})$/.exec(text.slice(0, cursor));
  if (slash) return { start: 0, query: slash[1], trigger: '/' };
  const m = /(^|\s)([@#])([\w./@-]{0,200})$/.exec(text.slice(0, cursor));
  if (!m) return undefined;
  return { start: cursor - m[3].length - 1, query: m[3], trigger: '@' };
}
