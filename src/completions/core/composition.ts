/**
 * Whether an input method (IME) is composing a word at the cursor. No API says so, and VS Code asks
 * inline providers on every composition update (seen in both tested versions), so it is read from
 * the document's changes: an update replaces exactly the text the previous change put there
 * (`n` → `ni` → `nih`), while typing inserts. Committing the word is such a replacement too: the
 * one trigger after it is skipped, and the next key asks as usual.
 */
export interface ContentChange {
  rangeOffset: number;
  rangeLength: number;
  text: string;
}

export class CompositionWatch {
  private readonly last = new Map<string, { version: number; offset: number; length: number; composing: boolean }>();

  /** A document's change (one edit: several at once, as multi-cursor typing makes, is not composing). */
  record(key: string, version: number, changes: readonly ContentChange[]): void {
    const previous = this.last.get(key);
    const only = changes.length === 1 ? changes[0] : undefined;
    if (!only) {
      this.last.delete(key);
      return;
    }
    const composing =
      !!previous && only.rangeLength > 0 && only.rangeOffset === previous.offset && only.rangeLength === previous.length && only.text.length > 0;
    this.last.set(key, { version, offset: only.rangeOffset, length: only.text.length, composing });
  }

  /** Whether the document's latest change (at `version`) was a composition update. */
  composing(key: string, version: number): boolean {
    const last = this.last.get(key);
    return !!last && last.version === version && last.composing;
  }

  forget(key: string): void {
    this.last.delete(key);
  }
}
