// A loopback server in its own process that replays the recorded streams in chunked writes of
// 1 to 4 KB, as fast as backpressure allows. Started by the benchmark; reports its port by IPC.
import { createServer, type ServerResponse } from 'node:http';
import { anthropicStream, openAiStream, type RecordedStream } from './fixtures';

const streams: Record<string, RecordedStream> = { '/openai': openAiStream(), '/anthropic': anthropicStream() };

async function replay(res: ServerResponse, bytes: Buffer): Promise<void> {
  let seed = 12345;
  let pos = 0;
  while (pos < bytes.length) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const size = 1024 + (seed % 3073);
    const ok = res.write(bytes.subarray(pos, pos + size));
    pos += size;
    if (!ok) await new Promise((r) => res.once('drain', r));
  }
  res.end();
}

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const path = (req.url ?? '').split('?')[0];
    const key = Object.keys(streams).find((p) => path.startsWith(p));
    if (!key) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    void replay(res, streams[key].bytes);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const port = (server.address() as { port: number }).port;
  const meta = Object.fromEntries(
    Object.entries(streams).map(([k, s]) => [k, { bytes: s.bytes.length, events: s.events, textLength: s.textLength, argumentLengths: s.argumentLengths }]),
  );
  process.send?.({ port, meta });
});
process.on('disconnect', () => process.exit(0));
