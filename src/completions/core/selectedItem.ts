/**
 * Ghost text beside IntelliSense. While the suggest widget is open VS Code tells the provider
 * which item is selected (`selectedCompletionInfo`: the range the item replaces and its text) and
 * shows an inline completion only when it extends that item. So the hole is asked as if the item
 * had been accepted: the prefix ends with the item's text, the suffix starts after the replaced
 * range, and the suggestion replaces the same range with the item's text plus the model's.
 */

/** The selected item in document offsets: it replaces `from`–`to` with `text`. */
export interface SelectedItem {
  from: number;
  to: number;
  text: string;
}

export interface HoleBesideItem {
  /** The document's text before the cursor, as it would be with the item accepted. */
  before: string;
  after: string;
  /** What the suggestion inserts over the item's range, given the model's continuation. */
  insert(continuation: string): string;
}

/**
 * The hole with the item accepted, or undefined when the item cannot be extended here (no text,
 * or a range that does not reach the cursor: the suggestion would then delete what lies between).
 */
export function holeBesideItem(all: string, cursor: number, item: SelectedItem): HoleBesideItem | undefined {
  if (!item.text || item.from > cursor || item.to < cursor || item.from < 0 || item.to > all.length) return undefined;
  return {
    before: all.slice(0, item.from) + item.text,
    after: all.slice(item.to),
    insert: (continuation) => item.text + continuation,
  };
}
