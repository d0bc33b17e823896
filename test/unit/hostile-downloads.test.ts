import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DownloadTooLargeError } from '../../src/gateway/core/binary';
import { png } from '../emulator/media';
import { clientFor, useEmulator } from './helpers';

/**
 * A hostile gateway's answers point the client at other servers (result URLs of Midjourney, Suno,
 * images and videos) and at answers of any size. Against the emulator as the gateway and a real
 * loopback server on another port (another origin) that records what it gets.
 */
describe('downloads a hostile gateway points elsewhere', () => {
  const ctx = useEmulator();
  const SECRET = 'access-proxy-secret-7f3a';
  // Named as a person writes it in settings.json: the letter case must not matter.
  const extra = { 'X-Access-Proxy': SECRET };
  const MB = 1024 * 1024;
  const IMAGE = png(64, 64, 7);

  /** What the foreign server got, per request; and whether it could finish each answer. */
  let got: { path: string; headers: IncomingHttpHeaders; finished?: boolean }[];
  let foreign: Server;
  let foreignUrl: string;
  let dir: string;

  before(async () => {
    foreign = createServer((req, res) => {
      const seen: (typeof got)[number] = { path: req.url ?? '', headers: req.headers };
      got.push(seen);
      res.on('close', () => (seen.finished = res.writableFinished));
      if (req.url?.startsWith('/big-declared')) {
        // Says 3 MB up front.
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(3 * MB) });
        res.end(Buffer.alloc(3 * MB));
      } else if (req.url?.startsWith('/big-chunked')) {
        // Says nothing of its size and keeps sending, 64 KB at a time, up to 8 MB.
        res.writeHead(200, { 'content-type': 'image/png' });
        let sent = 0;
        const more = () => {
          while (sent < 8 * MB && !res.destroyed) {
            sent += 64 * 1024;
            if (!res.write(Buffer.alloc(64 * 1024, 1))) return void res.once('drain', more);
          }
          if (!res.destroyed) res.end();
        };
        more();
      } else {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(IMAGE.length) });
        res.end(IMAGE);
      }
    });
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => foreign.close(() => resolve())));
  beforeEach(() => {
    got = [];
    dir = mkdtempSync(join(tmpdir(), 'mg-downloads-'));
  });
  afterEach(() => {
    ctx.emu.faults.clear();
    rmSync(dir, { recursive: true, force: true });
  });

  const clientWithClock = () => clientFor(ctx.emu, { headers: extra, sleep: (ms) => (ctx.emu.clock.advance(ms), Promise.resolve()) });

  /** The next Midjourney status answer is the gateway's word for a finished task whose image is at `imageUrl`. */
  const hostileTask = (id: string, imageUrl: string) =>
    ctx.emu.inject({
      path: `/mj/task/${id}/fetch`,
      fault: { kind: 'status', status: 200, body: { id, action: 'IMAGINE', status: 'SUCCESS', progress: '100%', imageUrl, buttons: [] } },
    });

  describe('the gateway’s extra headers (an access proxy’s secret) stay with the gateway', () => {
    it('a Midjourney image on another origin gets neither the extra header nor the key; on the gateway’s origin it gets the header', async () => {
      const { client } = clientWithClock();
      const id = await client.midjourney.imagine({ prompt: 'a paper boat' });
      const own = await client.midjourney.waitFor(id);
      assert.ok(own.imageUrl?.startsWith(ctx.emu.url), own.imageUrl);
      await (await client.midjourney.image(own.imageUrl!)).buffer();
      const atGateway = ctx.emu.requests.filter((r) => r.path.startsWith('/mj/image/')).at(-1)!;
      assert.equal(atGateway.headers['x-access-proxy'], SECRET, 'the gateway’s own origin gets the extra header');

      hostileTask(id, `${foreignUrl}/grid.png`);
      const hostile = await client.midjourney.fetch(id);
      assert.equal(hostile.imageUrl, `${foreignUrl}/grid.png`);
      assert.deepEqual(await (await client.midjourney.image(`${foreignUrl}/grid.png`)).buffer(), IMAGE);
      assert.equal(got.length, 1);
      assert.equal(got[0].headers['x-access-proxy'], undefined, 'no extra header on another origin');
      assert.equal(got[0].headers.authorization, undefined, 'no key on another origin');
    });

    it('Suno clips, image results and any other result URL on another origin get none of them either', async () => {
      const { client } = clientWithClock();
      await (await client.suno.download(`${foreignUrl}/clip.mp3`)).buffer();
      await (await client.imagegen.download(`${foreignUrl}/image.png`)).buffer();
      // Same host, another port: another origin.
      assert.deepEqual(
        got.map((g) => [g.path, g.headers['x-access-proxy'], g.headers.authorization, g.headers['api-key']]),
        [
          ['/clip.mp3', undefined, undefined, undefined],
          ['/image.png', undefined, undefined, undefined],
        ],
      );
    });

    it('a redirect from the gateway to another origin drops the extra header too, whatever its letter case', async () => {
      // A gateway whose video content answers with a redirect to the other server.
      const gateway = createServer((_req, res) => {
        res.writeHead(302, { location: `${foreignUrl}/video.mp4`, 'content-length': 0 });
        res.end();
      });
      await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
      try {
        const { client } = clientFor(ctx.emu, { baseUrl: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`, headers: extra });
        await (await client.videos.content('video_1')).buffer();
        assert.equal(got.length, 1);
        assert.equal(got[0].headers['x-access-proxy'], undefined);
        assert.equal(got[0].headers.authorization, undefined);
      } finally {
        await new Promise<void>((resolve) => gateway.close(() => resolve()));
      }
    });
  });

  describe('a download larger than the cap', () => {
    const limit = { maxBytes: 1 * MB, setting: 'modelGateway.assets.maxDownloadMegabytes' };
    const tooLarge = (e: unknown) =>
      e instanceof DownloadTooLargeError && /modelGateway\.assets\.maxDownloadMegabytes/.test(e.message) && /\b1 MB\b/.test(e.message);

    it('a Content-Length over the cap is refused before a byte is written; the folder stays empty', async () => {
      const { client } = clientWithClock();
      hostileTask('mj-big', `${foreignUrl}/big-declared.mp4`);
      const task = await client.midjourney.fetch('mj-big');
      const res = await client.midjourney.image(task.imageUrl!);
      await assert.rejects(res.toFile(join(dir, 'grid.png'), limit), tooLarge);
      assert.deepEqual(readdirSync(dir), [], 'no file, no partial file');
    });

    it('a body that never says its size is cut off once past the cap; no partial file is left, and the connection is dropped', async () => {
      const { client } = clientWithClock();
      const res = await client.suno.download(`${foreignUrl}/big-chunked`);
      await assert.rejects(res.toFile(join(dir, 'song.mp3'), limit), tooLarge);
      assert.deepEqual(readdirSync(dir), [], 'no file, no partial file');
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(got.at(-1)?.finished, false, 'the server could not send the 8 MB');
      // Held in memory the same way.
      await assert.rejects((await client.imagegen.download(`${foreignUrl}/big-chunked`)).buffer(limit), tooLarge);
    });

    it('under the cap, the file is written whole', async () => {
      const { client } = clientWithClock();
      const bytes = await (await client.imagegen.download(`${foreignUrl}/small.png`)).toFile(join(dir, 'small.png'), limit);
      assert.equal(bytes, IMAGE.length);
      assert.deepEqual(readdirSync(dir), ['small.png']);
    });
  });
});
