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
  /** The partial line: pieces of text without a line end, in order. */
  private pieces: string[] = [];
  private piecesLength = 0;
  private skipLeadingLF = false;
  private eventName = '';
  private data: string | null = null;

  /** Feeds one read; calls `onEvent` for each complete event, in order. */
  feed(chunk: Uint8Array, onEvent: SSEHandler): void {
    this.feedText(this.utf8.decode(chunk, { stream: true }), onEvent);
  }

  /**
   * Feeds already-decoded text. A line that spans many reads is kept as a list of pieces and
   * joined once, when its end arrives: each read is scanned once, so decoding stays linear in the
   * size of an event however it is split (joining on every read would rescan the whole line).
   */
  feedText(text: string, onEvent: SSEHandler): void {
    if (this.pieces.length === 0) {
      this.process(text, 0, onEvent);
      return;
    }
    if (text.indexOf('\n') === -1 && text.indexOf('\r') === -1) {
      this.pieces.push(text);
      this.piecesLength += text.length;
      return;
    }
    const held = this.piecesLength;
    const joined = this.pieces.join('') + text;
    this.pieces = [];
    this.piecesLength = 0;
    // The held pieces hold no line end: the scan starts where the new text does.
    this.process(joined, held, onEvent);
  }

  /**
   * Ends the stream. Returns true when bytes of an unfinished event were left over (the stream
   * was cut mid-event); that event is not dispatched.
   */
  end(): boolean {
    const tail = this.utf8.decode();
    const leftover = this.piecesLength > 0 || tail.length > 0 || this.data !== null || this.eventName !== '';
    this.pieces = [];
    this.piecesLength = 0;
    this.data = null;
    this.eventName = '';
    this.skipLeadingLF = false;
    return leftover;
  }

  /** What was received but not dispatched: the partial line and the event in progress. */
  pendingText(): string {
    const rest = this.pieces.join('');
    return `${this.data ?? ''}${this.data !== null && rest ? '\n' : ''}${rest}`;
  }

  /** Characters held between reads: the partial line plus the data of the event in progress. */
  get bufferedLength(): number {
    return this.piecesLength + (this.data === null ? 0 : this.data.length);
  }

  /** Dispatches the complete lines of `s`; no line end lies before `scanFrom`. */
  private process(s: string, scanFrom: number, onEvent: SSEHandler): void {
    const len = s.length;
    let pos = 0;
    if (this.skipLeadingLF && len > 0) {
      if (s.charCodeAt(0) === LF) pos = 1;
      this.skipLeadingLF = false;
    }
    // Position of the next '\r' at or after pos; -1 once none is left. Cached so that streams
    // without '\r' (nearly all) scan for it once per read, not once per line.
    let cr = s.indexOf('\r', Math.max(pos, scanFrom));
    let nlFrom = Math.max(pos, scanFrom);
    while (pos < len) {
      const nl = s.indexOf('\n', Math.max(pos, nlFrom));
      nlFrom = 0;
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
    if (pos < len) {
      this.pieces.push(s.slice(pos));
      this.piecesLength = len - pos;
    }
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
