/**
 * Server-sent events decoder (WHATWG rules) for byte chunks split anywhere.
 *
 * - Line ends `\n`, `\r\n` and `\r`, including a `\r\n` pair split across two reads.
 * - UTF-8 characters split across reads (a streaming TextDecoder keeps the partial bytes).
 * - Comment lines (`: PING`) are skipped; `event:` names and multi-line `data:` are kept;
 *   `id:` and `retry:` are ignored (gateway streams do not resume).
 * - An event without its closing blank line when the stream ends is dropped, as the spec says:
 *   the stream layer then reports the stream as cut instead of parsing half an event.
 *
 * Memory stays bounded by the largest single event plus one read: the unprocessed remainder is
 * the only thing carried between reads.
 */
export type SSEHandler = (event: string, data: string) => void;

const LF = 10;
const COLON = 58;
const SPACE = 32;

export class SSEDecoder {
  private readonly utf8 = new TextDecoder('utf-8');
  private rest = '';
  private skipLeadingLF = false;
  private eventName = '';
  private data: string | null = null;

  /** Feeds one read; calls `onEvent` for each complete event, in order. */
  feed(chunk: Uint8Array, onEvent: SSEHandler): void {
    const decoded = this.utf8.decode(chunk, { stream: true });
    this.process(this.rest.length > 0 ? this.rest + decoded : decoded, onEvent);
  }

  /** Feeds already-decoded text (used by tests and by callers that hold strings). */
  feedText(text: string, onEvent: SSEHandler): void {
    this.process(this.rest.length > 0 ? this.rest + text : text, onEvent);
  }

  /**
   * Ends the stream. Returns true when bytes of an unfinished event were left over (the stream
   * was cut mid-event); that event is not dispatched.
   */
  end(): boolean {
    const tail = this.utf8.decode();
    const leftover = this.rest.length > 0 || tail.length > 0 || this.data !== null || this.eventName !== '';
    this.rest = '';
    this.data = null;
    this.eventName = '';
    this.skipLeadingLF = false;
    return leftover;
  }

  /** Characters held between reads: the partial line plus the data of the event in progress. */
  get bufferedLength(): number {
    return this.rest.length + (this.data === null ? 0 : this.data.length);
  }

  private process(s: string, onEvent: SSEHandler): void {
    const len = s.length;
    let pos = 0;
    if (this.skipLeadingLF && len > 0) {
      if (s.charCodeAt(0) === LF) pos = 1;
      this.skipLeadingLF = false;
    }
    // Position of the next '\r' at or after pos; -1 once none is left. Cached so that streams
    // without '\r' (nearly all) scan for it once per read, not once per line.
    let cr = s.indexOf('\r', pos);
    while (pos < len) {
      const nl = s.indexOf('\n', pos);
      if (cr !== -1 && cr < pos) cr = s.indexOf('\r', pos);
      let end: number;
      let next: number;
      if (cr !== -1 && (nl === -1 || cr < nl)) {
        end = cr;
        if (cr + 1 < len) {
          next = s.charCodeAt(cr + 1) === LF ? cr + 2 : cr + 1;
        } else {
          next = len;
          this.skipLeadingLF = true; // a '\n' opening the next read belongs to this '\r'
        }
      } else if (nl !== -1) {
        end = nl;
        next = nl + 1;
      } else {
        break;
      }
      this.line(s, pos, end, onEvent);
      pos = next;
    }
    this.rest = pos < len ? s.slice(pos) : '';
  }

  private line(s: string, start: number, end: number, onEvent: SSEHandler): void {
    if (start === end) {
      if (this.data !== null || this.eventName !== '') {
        const data = this.data ?? '';
        const name = this.eventName;
        this.data = null;
        this.eventName = '';
        onEvent(name, data);
      }
      return;
    }
    const first = s.charCodeAt(start);
    if (first === COLON) return; // comment, e.g. ": PING"
    // Fast path for the common "data: ..." line.
    if (first === 100 /* d */ && s.startsWith('data:', start)) {
      let v = start + 5;
      if (v < end && s.charCodeAt(v) === SPACE) v++;
      this.appendData(s.slice(v, end));
      return;
    }
    let colon = start;
    while (colon < end && s.charCodeAt(colon) !== COLON) colon++;
    const field = s.slice(start, colon);
    let v = colon + 1;
    if (v < end && s.charCodeAt(v) === SPACE) v++;
    const value = colon >= end ? '' : s.slice(v, end);
    if (field === 'event') this.eventName = value;
    else if (field === 'data') this.appendData(value);
    // 'id', 'retry' and unknown fields are ignored.
  }

  private appendData(value: string): void {
    this.data = this.data === null ? value : this.data + '\n' + value;
  }
}
