/**
 * Reasoning that arrives inside the content as `<think>…</think>` at its start (DeepSeek-R1 style
 * models behind gateways that do not split it out). Streamed, so a tag may be cut anywhere across
 * chunks: text is held back only while it could still be the start of a tag.
 */
const OPEN = '<think>';
const CLOSE = '</think>';

export interface Split {
  text: string;
  thinking: string;
}

/** The longest end of `s` that is a beginning of `tag`. */
function partialTagAtEnd(s: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, s.length); n > 0; n--) if (tag.startsWith(s.slice(-n))) return n;
  return 0;
}

export class ThinkTagSplitter {
  private state: 'start' | 'thinking' | 'after' | 'text' = 'start';
  private held = '';

  push(delta: string): Split {
    const out: Split = { text: '', thinking: '' };
    let rest = this.held + delta;
    this.held = '';
    while (rest) {
      switch (this.state) {
        case 'start': {
          const trimmed = rest.trimStart();
          if (trimmed.startsWith(OPEN)) {
            this.state = 'thinking';
            rest = trimmed.slice(OPEN.length);
          } else if (OPEN.startsWith(trimmed)) {
            this.held = rest;
            return out;
          } else {
            this.state = 'text';
          }
          break;
        }
        case 'thinking': {
          const end = rest.indexOf(CLOSE);
          if (end >= 0) {
            out.thinking += rest.slice(0, end);
            rest = rest.slice(end + CLOSE.length);
            this.state = 'after';
          } else {
            const keep = partialTagAtEnd(rest, CLOSE);
            out.thinking += rest.slice(0, rest.length - keep);
            this.held = rest.slice(rest.length - keep);
            return out;
          }
          break;
        }
        case 'after': {
          // The blank line models put after the closing tag is not part of the answer.
          rest = rest.trimStart();
          if (rest) this.state = 'text';
          break;
        }
        case 'text':
          out.text += rest;
          rest = '';
          break;
      }
    }
    return out;
  }

  /** The stream ended: what was held back (an unclosed `<think>` stays thinking). */
  end(): Split {
    const held = this.held;
    this.held = '';
    if (this.state === 'thinking') return { text: '', thinking: held };
    return { text: this.state === 'after' ? held.trimStart() : held, thinking: '' };
  }
}
