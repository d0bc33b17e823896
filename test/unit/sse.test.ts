import { strict as assert } from 'node:assert';
import { SSEDecoder } from '../../src/gateway';

type Ev = [string, string];

function decodeAll(pieces: Uint8Array[]): { events: Ev[]; leftover: boolean } {
  const d = new SSEDecoder();
  const events: Ev[] = [];
  for (const p of pieces) d.feed(p, (e, data) => events.push([e, data]));
  return { events, leftover: d.end() };
}

// A recorded-style stream: every line-end kind, comments, event names, multi-line data,
// multi-byte UTF-8 (CJK, emoji, accents), an ignored id field, and the [DONE] sentinel.
const RECORDED =
  ': PING\n\n' +
  'data: {"choices":[{"delta":{"content":"Hé"}}]}\n\n' +
  'data: {"choices":[{"delta":{"content":"漢字 🚀"}}]}\r\n\r\n' +
  'event: message_delta\r' +
  'data: {"type":"message_delta"}\r\r' +
  'id: 7\n' +
  'data: line one\n' +
  'data: line two ✓\n\n' +
  ':comment with 🚀\n' +
  'data:no-space\n\n' +
  'event: ping\n' +
  'data: {"type": "ping"}\n\n' +
  'data: [DONE]\n\n';

const EXPECTED: Ev[] = [
  ['', '{"choices":[{"delta":{"content":"Hé"}}]}'],
  ['', '{"choices":[{"delta":{"content":"漢字 🚀"}}]}'],
  ['message_delta', '{"type":"message_delta"}'],
  ['', 'line one\nline two ✓'],
  ['', 'no-space'],
  ['ping', '{"type": "ping"}'],
  ['', '[DONE]'],
];

describe('SSE decoder', () => {
  const bytes = new TextEncoder().encode(RECORDED);

  it('decodes the recorded stream whole', () => {
    const { events, leftover } = decodeAll([bytes]);
    assert.deepEqual(events, EXPECTED);
    assert.equal(leftover, false);
  });

  it('gives the same events when split at every byte offset (inside UTF-8 characters and CRLF pairs too)', () => {
    for (let i = 1; i < bytes.length; i++) {
      const { events, leftover } = decodeAll([bytes.subarray(0, i), bytes.subarray(i)]);
      assert.deepEqual(events, EXPECTED, `split at byte ${i}`);
      assert.equal(leftover, false, `split at byte ${i}`);
    }
  });

  it('gives the same events fed one byte at a time and in random 3-way splits', () => {
    const oneByOne = Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
    assert.deepEqual(decodeAll(oneByOne).events, EXPECTED);
    let seed = 42;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let n = 0; n < 300; n++) {
      const a = 1 + Math.floor(rnd() * (bytes.length - 2));
      const b = a + 1 + Math.floor(rnd() * (bytes.length - a - 1));
      assert.deepEqual(decodeAll([bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)]).events, EXPECTED, `splits ${a},${b}`);
    }
  });

  it('drops an event cut before its blank line and reports the leftover', () => {
    const cut = new TextEncoder().encode('data: {"a":1}\n\ndata: {"b":');
    const { events, leftover } = decodeAll([cut]);
    assert.deepEqual(events, [['', '{"a":1}']]);
    assert.equal(leftover, true);
  });

  it('keeps memory bounded by the largest event, not the stream', () => {
    const d = new SSEDecoder();
    const event = new TextEncoder().encode(`data: ${JSON.stringify({ pad: 'x'.repeat(1000) })}\n\n`);
    let maxBuffered = 0;
    let count = 0;
    for (let i = 0; i < 5000; i++) {
      // Feed each event in two uneven halves so something is always held between reads.
      d.feed(event.subarray(0, 700), () => count++);
      maxBuffered = Math.max(maxBuffered, d.bufferedLength);
      d.feed(event.subarray(700), () => count++);
    }
    assert.equal(count, 5000);
    assert.ok(maxBuffered <= event.length, `buffered ${maxBuffered} chars for events of ${event.length} bytes`);
    assert.equal(d.bufferedLength, 0);
  });
});
