import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AbortError, BadRequestError, imagePrice, NotFoundError, VideoFailedError, type VideoTask } from '../../src/gateway';
import { decodePng, png, pngSize } from '../emulator/media';
import { clientFor, DEMO_KEY, useEmulator, refusedBeforeSending } from './helpers';

/** Reads the top-level boxes of an MP4 and the duration from its mvhd. */
function mp4Boxes(buf: Buffer): { types: string[]; seconds: number } {
  const types: string[] = [];
  let seconds = 0;
  for (let pos = 0; pos + 8 <= buf.length;) {
    const size = buf.readUInt32BE(pos);
    const type = buf.toString('ascii', pos + 4, pos + 8);
    types.push(type);
    if (type === 'moov' && buf.toString('ascii', pos + 12, pos + 16) === 'mvhd') {
      const mvhd = pos + 16;
      seconds = buf.readUInt32BE(mvhd + 16) / buf.readUInt32BE(mvhd + 12);
    }
    pos += size;
  }
  return { types, seconds };
}

describe('videos', () => {
  const ctx = useEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'mg-video-'));
  // Waiting advances the emulator's clock instead of real time.
  const clientWithClock = () => clientFor(ctx.emu, { sleep: (ms) => (ctx.emu.clock.advance(ms), Promise.resolve()) });

  it('creates a task, waits through queued → in_progress → completed, and downloads the MP4', async () => {
    const { client } = clientWithClock();
    const task = await client.videos.create({ model: 'sora-2', prompt: 'a lighthouse at dusk', seconds: '8', size: '1280x720' });
    assert.equal(task.status, 'queued');
    const seen: string[] = [];
    const done = await client.videos.waitFor(task.id, { onProgress: (t: VideoTask) => seen.push(t.status) });
    assert.equal(done.status, 'completed');
    assert.deepEqual([...new Set(seen)], ['queued', 'in_progress', 'completed']);
    const polls = ctx.emu.requests.filter((r) => r.path === `/v1/videos/${task.id}`).length;
    assert.ok(polls >= 5 && polls <= 7, `polled every 15 s over 70 s: ${polls} polls`);
    const file = join(dir, 'clip.mp4');
    await (await client.videos.content(task.id)).toFile(file);
    const mp4 = mp4Boxes(readFileSync(file));
    assert.deepEqual(mp4.types, ['ftyp', 'moov', 'mdat']);
    assert.equal(mp4.seconds, 8);
    await client.videos.delete(task.id);
    await assert.rejects(client.videos.retrieve(task.id), NotFoundError);
  });

  it('a family without a queue starts in progress; downloading early is refused by the gateway', async () => {
    const { client } = clientWithClock();
    const task = await client.videos.create({ model: 'veo-3.1-fast-generate-preview', prompt: 'waves', seconds: 6, size: '1080p' });
    assert.equal(task.status, 'in_progress');
    await assert.rejects(client.videos.content(task.id), (e: unknown) => e instanceof BadRequestError && /not completed yet/.test(e.message));
  });

  it('reports a failed task with its reason', async () => {
    const { client } = clientWithClock();
    const task = await client.videos.create({ model: 'sora-2', prompt: 'something #fail' });
    await assert.rejects(client.videos.waitFor(task.id), (e: unknown) => e instanceof VideoFailedError && /rejected the prompt/.test(e.message));
  });

  it('waiting can be cancelled', async () => {
    const controller = new AbortController();
    const { client } = clientFor(ctx.emu, {
      sleep: (ms) => {
        ctx.emu.clock.advance(ms);
        controller.abort();
        return Promise.resolve();
      },
    });
    const task = await client.videos.create({ model: 'sora-2', prompt: 'slow' });
    await assert.rejects(client.videos.waitFor(task.id, { signal: controller.signal }), AbortError);
  });

  it('a new-api before /v1/videos: the same task through /v1/video/generations, polled, and its video fetched from the result URL without the key', async () => {
    ctx.emu.olderVideoRoutes = true;
    try {
      const { client } = clientWithClock();
      const task = await client.videos.create({ model: 'sora-2', prompt: 'a lighthouse at dusk', seconds: '4', size: '1280x720' });
      assert.equal(task.status, 'queued');
      const unified = ctx.emu.requests.filter((r) => r.path === '/v1/video/generations');
      assert.equal(unified.length, 1);
      assert.deepEqual(Object.keys(unified[0].body as object).sort(), ['duration', 'height', 'model', 'prompt', 'width'], "new-api's VideoRequest fields");
      const done = await client.videos.waitFor(task.id);
      assert.equal(done.status, 'completed');
      const leaks = ctx.emu.storage.credentialLeaks.length;
      const file = join(dir, 'unified.mp4');
      await (await client.videos.content(task.id)).toFile(file);
      assert.equal(mp4Boxes(readFileSync(file)).seconds, 4);
      assert.equal(ctx.emu.storage.credentialLeaks.length, leaks, 'the storage origin got no key');
      assert.ok(ctx.emu.storage.served > 0, 'downloaded from the storage origin');
      // An unknown task: new-api's 400 task_not_exist reads as a task the gateway no longer knows.
      await assert.rejects(client.videos.retrieve('task_nope'), NotFoundError);
      await client.videos.delete(task.id); // no such route there: nothing to do
    } finally {
      ctx.emu.olderVideoRoutes = false;
    }
  });

  it('checks seconds and size against the model family, passing unknown models through', async () => {
    const { client } = clientFor(ctx.emu);
    await refusedBeforeSending(ctx.emu, () => client.videos.create({ model: 'sora-2', prompt: 'p', seconds: '5' }), /seconds: sora-2 takes 4, 8, 12 seconds/);
    await refusedBeforeSending(
      ctx.emu,
      () => client.videos.create({ model: 'sora-2-pro', prompt: 'p', size: '1080p' }),
      /size: sora-2-pro takes sizes 720x1280/,
    );
    await refusedBeforeSending(
      ctx.emu,
      () => client.videos.create({ model: 'veo-3.1-fast-generate-preview', prompt: 'p', size: '8k' }),
      /takes sizes 720p, 1080p, 4k/,
    );
    await refusedBeforeSending(ctx.emu, () => client.videos.create({ model: 'sora-2', prompt: '' }), /prompt: prompt must not be empty/);
    await assert.rejects(client.videos.create({ model: 'kling-emu', prompt: 'p', seconds: '7' }), /unavailable/);
  });
});

describe('image family', () => {
  const ctx = useEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'mg-img-'));
  const source = join(dir, 'source.png');
  const mask = join(dir, 'mask.png');
  const thinMask = join(dir, 'thin-mask.png');
  before(() => {
    writeFileSync(source, png(320, 240, 7));
    // Black (edit) region: the left quarter; then a mask with only a 5% black strip.
    writeFileSync(
      mask,
      png(320, 240, 0, (x) => (x < 80 ? [0, 0, 0] : [255, 255, 255])),
    );
    writeFileSync(
      thinMask,
      png(320, 240, 0, (x) => (x < 16 ? [0, 0, 0] : [255, 255, 255])),
    );
  });

  it('generates (V3) with the Api-Key header; the image downloads and decodes as a PNG of the resolution', async () => {
    const { client } = clientFor(ctx.emu);
    const res = await client.imagegen.v3.generate({ prompt: 'a red fox', aspect_ratio: '16x9', num_images: 2, seed: 42, rendering_speed: 'TURBO' });
    const sent = ctx.emu.requestsTo('/imagegen/v1/imagegen-v3/generate').at(-1)!;
    assert.equal(sent.headers['api-key'], DEMO_KEY);
    assert.equal(sent.headers.authorization, undefined);
    assert.equal(res.data.length, 2);
    assert.deepEqual(
      res.data.map((d) => d.seed),
      [42, 43],
    );
    const first = res.data[0];
    assert.equal(first.is_image_safe, true);
    const [w, h] = first.resolution!.split('x').map(Number);
    assert.ok(w > h && Math.abs(w / h - 16 / 9) < 0.05, first.resolution!);
    const bytes = await (await client.imagegen.download(first.url!)).buffer();
    const decoded = decodePng(bytes)!;
    assert.deepEqual([decoded.width, decoded.height], [w, h]);
    const download = ctx.emu.requests.at(-1)!;
    assert.equal(download.headers['api-key'], undefined, 'no credential goes with a result download');
  });

  it('reports unsafe results without a URL', async () => {
    const { client } = clientFor(ctx.emu);
    const res = await client.imagegen.v3.generate({ prompt: 'something #unsafe' });
    assert.equal(res.data[0].is_image_safe, false);
    assert.equal(res.data[0].url, null);
  });

  it('remixes, edits and replaces backgrounds (V3), keeping the source size where it should', async () => {
    const { client } = clientFor(ctx.emu);
    const remix = await client.imagegen.v3.remix({ prompt: 'as a watercolour', image: source, image_weight: 80 });
    assert.ok(remix.data[0].url);
    const edit = await client.imagegen.v3.edit({ prompt: 'add a hat', image: source, mask });
    assert.equal(edit.data[0].resolution, '320x240');
    const bg = await client.imagegen.v3.replaceBackground({ prompt: 'a beach', image: source, rendering_speed: 'QUALITY' });
    assert.equal(bg.data[0].resolution, '320x240');
  });

  it('runs the older generation: generate (JSON), edit on V_2 with the mask rule, remix, upscale, describe', async () => {
    const { client } = clientFor(ctx.emu);
    const gen = await client.imagegen.legacy.generate({ image_request: { prompt: 'a castle', model: 'V_2A_TURBO', aspect_ratio: 'ASPECT_9_16' } });
    const [w, h] = gen.data[0].resolution!.split('x').map(Number);
    assert.ok(h > w);
    assert.equal((ctx.emu.requestsTo('/imagegen/generate').at(-1)!.body as { image_request: { model: string } }).image_request.model, 'V_2A_TURBO');
    const edit = await client.imagegen.legacy.edit({ image_file: source, mask, prompt: 'add snow', model: 'V_2' });
    assert.equal(edit.data[0].resolution, '320x240');
    await assert.rejects(
      client.imagegen.legacy.edit({ image_file: source, mask: thinMask, prompt: 'add snow', model: 'V_2_TURBO' }),
      (e: unknown) => e instanceof BadRequestError && /at least 10% is needed/.test(e.message),
    );
    const remix = await client.imagegen.legacy.remix({ image_file: source, image_request: { prompt: 'neon', image_weight: 30 } });
    assert.ok(remix.data[0].url);
    const up = await client.imagegen.legacy.upscale({ image_file: source, image_request: { resemblance: 70, detail: 20 } });
    assert.equal(up.data[0].resolution, '640x480');
    const upBytes = await (await client.imagegen.download(up.data[0].url!)).buffer();
    assert.deepEqual(pngSize(upBytes), { width: 640, height: 480 });
    const descriptions = await client.imagegen.legacy.describe({ image_file: source });
    assert.match(descriptions[0], /320x240/);
  });

  it('refuses every out-of-range field and wrong combination before sending', async () => {
    const { client } = clientFor(ctx.emu);
    const e = ctx.emu;
    await refusedBeforeSending(e, () => client.imagegen.v3.generate({ prompt: 'x', num_images: 9 }), /num_images: must be between 1 and 8/);
    await refusedBeforeSending(e, () => client.imagegen.v3.generate({ prompt: 'x', seed: 2147483648 }), /seed: must be between 0 and 2147483647/);
    await refusedBeforeSending(e, () => client.imagegen.v3.generate({ prompt: 'x', aspect_ratio: '7x5' as never }), /aspect_ratio: must be one of 1x3, 3x1/);
    await refusedBeforeSending(e, () => client.imagegen.v3.generate({ prompt: '' }), /prompt: prompt must not be empty/);
    await refusedBeforeSending(
      e,
      () => client.imagegen.v3.generate({ prompt: 'x', rendering_speed: 'FAST' as never }),
      /rendering_speed: must be TURBO, DEFAULT or QUALITY/,
    );
    await refusedBeforeSending(
      e,
      () => client.imagegen.v3.remix({ prompt: 'x', image: source, image_weight: 0 }),
      /image_weight: image_weight must be between 1 and 100/,
    );
    await refusedBeforeSending(e, () => client.imagegen.v3.edit({ prompt: 'x', image: source } as never), /mask: mask is required/);
    await refusedBeforeSending(
      e,
      () => client.imagegen.v3.replaceBackground({ prompt: 'x', image: source, aspect_ratio: '1x1' }),
      /aspect_ratio: replace-background does not accept this field/,
    );
    await refusedBeforeSending(
      e,
      () => client.imagegen.v3.replaceBackground({ prompt: 'x', image: source, negative_prompt: 'y' }),
      /negative_prompt: replace-background does not accept/,
    );
    await refusedBeforeSending(
      e,
      () => client.imagegen.legacy.edit({ image_file: source, mask, prompt: 'x', model: 'V_2A' as never }),
      /model: edit is supported only by V_2 and V_2_TURBO/,
    );
    await refusedBeforeSending(
      e,
      () => client.imagegen.legacy.upscale({ image_file: source, image_request: { resemblance: 101 } }),
      /resemblance: resemblance must be between 1 and 100/,
    );
    await refusedBeforeSending(
      e,
      () => client.imagegen.legacy.upscale({ image_file: source, image_request: { detail: 0 } }),
      /detail: detail must be between 1 and 100/,
    );
    await refusedBeforeSending(
      e,
      () => client.imagegen.legacy.generate({ image_request: { prompt: 'x', aspect_ratio: '16x9' as never } }),
      /aspect_ratio: must be one of ASPECT_1_1/,
    );
    const gif = join(dir, 'a.gif');
    writeFileSync(gif, 'GIF89a');
    await refusedBeforeSending(e, () => client.imagegen.legacy.describe({ image_file: gif }), /image_file: "a\.gif" is not one of png, jpg, jpeg, webp/);
    // Judged by its bytes, not its name: a GIF renamed .png, on disk or in memory, in every upload field.
    const disguised = join(dir, 'disguised.png');
    writeFileSync(disguised, Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(64)]));
    await refusedBeforeSending(
      e,
      () => client.imagegen.legacy.upscale({ image_file: disguised }),
      /image_file: "disguised\.png": the data is a GIF image \(labelled image\/png\)/,
    );
    await refusedBeforeSending(
      e,
      () => client.imagegen.v3.edit({ prompt: 'x', image: source, mask: disguised }),
      /mask: "disguised\.png": the data is a GIF image/,
    );
    await refusedBeforeSending(
      e,
      () => client.imagegen.v3.remix({ prompt: 'x', image: { data: Buffer.from('not an image at all'), filename: 'x.jpg' } }),
      /image: "x\.jpg": the data is not a PNG, JPEG or WEBP image/,
    );
  });

  it("prices requests from the spec's tables, and the account is charged that much", async () => {
    assert.equal(imagePrice({ generation: 'v3', operation: 'generate', rendering_speed: 'TURBO', num_images: 3 }), 0.09);
    assert.equal(imagePrice({ generation: 'v3', operation: 'generate' }), 0.06);
    assert.equal(imagePrice({ generation: 'v3', operation: 'edit', rendering_speed: 'TURBO' }), 0.06);
    assert.equal(imagePrice({ generation: 'v3', operation: 'replace-background', rendering_speed: 'QUALITY', num_images: 2 }), 0.18);
    assert.equal(imagePrice({ generation: 'legacy', operation: 'generate', model: 'V_2A_TURBO', num_images: 4 }), 0.1);
    assert.equal(imagePrice({ generation: 'legacy', operation: 'edit', model: 'V_2_TURBO' }), 0.05);
    assert.equal(imagePrice({ generation: 'legacy', operation: 'upscale' }), 0.06);
    assert.equal(imagePrice({ generation: 'legacy', operation: 'describe' }), undefined);

    const { emu } = ctx;
    const user = emu.store.addUser({ username: 'painter', quota: 10_000_000 });
    const key = emu.store.addKey({ userId: user.id, name: 'p', unlimitedQuota: true });
    const { client } = clientFor(emu, { apiKey: key.secret });
    await client.imagegen.v3.generate({ prompt: 'x', num_images: 2, rendering_speed: 'QUALITY' });
    assert.equal(
      10_000_000 - user.quota,
      Math.round(imagePrice({ generation: 'v3', operation: 'generate', rendering_speed: 'QUALITY', num_images: 2 })! * 500_000),
    );
  });
});
