import { strict as assert } from 'node:assert';
import { BadRequestError, GatewayError, NotFoundError, SunoFailedError, ValidationError, buttonLabel, type SunoTask } from '../../src/gateway';
import { pngSize } from '../../src/assets/core/png';
import { isChatModel } from '../../src/common/conversation';
import { readMp3Text } from '../emulator/media';
import type { ServerProfile } from '../emulator/profiles';
import { clientFor, useEmulator } from './helpers';

/**
 * Music (Suno) and Midjourney tasks through new-api's routes, against the emulator, whose shapes are
 * checked here against the field lists of new-api's own structs (`dto/task.go` TaskDto,
 * `dto/suno.go` TaskResponse, `dto/midjourney.go` MidjourneyDto and MidjourneyResponse).
 */
describe('music (Suno) and Midjourney tasks', () => {
  const ctx = useEmulator();
  let profile: ServerProfile;
  beforeEach(() => (profile = ctx.emu.profile));
  afterEach(() => (ctx.emu.profile = profile));
  // Waiting moves the emulator's clock instead of real time.
  const clientWithClock = () => clientFor(ctx.emu, { sleep: (ms) => (ctx.emu.clock.advance(ms), Promise.resolve()) });
  const demoKey = () => [...ctx.emu.store.keys.values()].find((k) => k.name === 'demo')!;
  const keyHeaders = { authorization: 'Bearer sk-emulator-demo-key-0000000000000000', 'content-type': 'application/json' };

  it('a song: submitted, in progress with a percentage, then two clips whose audio downloads; billed once at the per-call price', async () => {
    const { client } = clientWithClock();
    const before = demoKey().usedQuota;
    const id = await client.suno.music({ gpt_description_prompt: 'a calm song about the sea', make_instrumental: false });
    assert.match(id, /^task_/);
    assert.equal(demoKey().usedQuota - before, 0.1 * 500_000, "suno_music's price, $0.10, billed when accepted");
    const seen: SunoTask[] = [];
    const done = await client.suno.waitFor(id, { intervalMs: 10_000, onProgress: (t) => seen.push(t) });
    assert.equal(done.status, 'SUCCESS');
    assert.deepEqual([...new Set(seen.map((t) => t.status))], ['SUBMITTED', 'IN_PROGRESS', 'SUCCESS']);
    const progress = seen.filter((t) => t.status === 'IN_PROGRESS').map((t) => t.progress!);
    assert.ok(progress.length >= 2 && progress.every((p, i) => i === 0 || p > progress[i - 1]), `rising: ${progress.join(', ')}`);
    assert.equal(done.songs.length, 2);
    const audio = await (await client.suno.download(done.songs[0].audio_url!)).buffer();
    const decoded = readMp3Text(audio);
    assert.ok(decoded && decoded.seconds > 10, 'an MP3 of the clip');
    assert.match(decoded.text ?? '', /a calm song about the sea/);
    assert.equal(demoKey().usedQuota - before, 0.1 * 500_000, 'polling costs nothing');
  });

  it("new-api's task shapes: the submit envelope and TaskDto's fields", async () => {
    const submit = (await (
      await fetch(`${ctx.emu.url}/suno/submit/music`, {
        method: 'POST',
        headers: keyHeaders,
        body: JSON.stringify({ prompt: '[Verse] la la', tags: 'pop', title: 'La' }),
      })
    ).json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(submit).sort(), ['code', 'data', 'message']);
    assert.equal(submit.code, 'success');
    const fetched = (await (await fetch(`${ctx.emu.url}/suno/fetch/${String(submit.data)}`, { headers: keyHeaders })).json()) as {
      code: string;
      data: Record<string, unknown>;
    };
    assert.equal(fetched.code, 'success');
    // TaskDto's json tags (dto/task.go), less the omitempty ones an ordinary task leaves out.
    assert.deepEqual(
      Object.keys(fetched.data).sort(),
      [
        'action',
        'channel_id',
        'created_at',
        'data',
        'fail_reason',
        'finish_time',
        'group',
        'id',
        'platform',
        'progress',
        'properties',
        'quota',
        'status',
        'submit_time',
        'start_time',
        'task_id',
        'updated_at',
        'user_id',
      ].sort(),
    );
    assert.equal(fetched.data.action, 'MUSIC');
    assert.equal(fetched.data.progress, '0%');
    // POST /suno/fetch with ids lists the caller's tasks.
    const many = (await (
      await fetch(`${ctx.emu.url}/suno/fetch`, { method: 'POST', headers: keyHeaders, body: JSON.stringify({ ids: [submit.data, 'task_unknown'] }) })
    ).json()) as { data: unknown[] };
    assert.equal(many.data.length, 1);
  });

  it('a failed song says why, and its price goes back to the key', async () => {
    const { client } = clientWithClock();
    const before = demoKey().usedQuota;
    const id = await client.suno.music({ prompt: 'lyrics #fail', tags: 'rock', title: 'Broken' });
    await assert.rejects(client.suno.waitFor(id), (e: unknown) => e instanceof SunoFailedError && /rejected the prompt/.test(e.message));
    assert.equal(demoKey().usedQuota, before, 'refunded');
  });

  it('refused before the wire: no description and no lyrics, lyrics over the limit, a continuation without its task', async () => {
    const { client } = clientWithClock();
    const sent = ctx.emu.requests.length;
    await assert.rejects(client.suno.music({ tags: 'jazz' }), (e: unknown) => e instanceof ValidationError && /prompt: give a description/.test(e.message));
    await assert.rejects(client.suno.music({ prompt: 'x'.repeat(5001) }), (e: unknown) => e instanceof ValidationError && /at most 5000/.test(e.message));
    await assert.rejects(
      client.suno.music({ prompt: 'la', continue_clip_id: 'abc' }),
      (e: unknown) => e instanceof ValidationError && /task_id/.test(e.message),
    );
    assert.equal(ctx.emu.requests.length, sent, 'nothing went over the wire');
  });

  it('the task models new-api lists in /v1/models are not offered as chat models', () => {
    for (const id of ['suno_music', 'suno_lyrics', 'mj_imagine', 'mj_upscale', 'mj_variation']) assert.equal(isChatModel(id), false, id);
    assert.equal(isChatModel('gpt-4o-mini'), true);
  });

  it("an unknown task is new-api's 400 task_not_exist; one-api has no task routes (404)", async () => {
    const { client } = clientWithClock();
    await assert.rejects(client.suno.fetch('task_nope'), (e: unknown) => e instanceof BadRequestError && e.code === 'task_not_exist');
    ctx.emu.profile = 'one-api';
    await assert.rejects(client.suno.music({ prompt: 'la' }), NotFoundError);
    await assert.rejects(client.midjourney.imagine({ prompt: 'a cat' }), NotFoundError);
  });

  it('Midjourney: a grid with U1–U4 and V1–V4, then U2 makes one upscaled image; each action billed at its price', async () => {
    const { client } = clientWithClock();
    const before = demoKey().usedQuota;
    const id = await client.midjourney.imagine({ prompt: 'a paper boat on a pond --ar 1:1' });
    const statuses: string[] = [];
    const grid = await client.midjourney.waitFor(id, { onProgress: (t) => statuses.push(t.status) });
    assert.deepEqual([...new Set(statuses)], ['SUBMITTED', 'IN_PROGRESS', 'SUCCESS']);
    assert.deepEqual(grid.buttons.map(buttonLabel), ['U1', 'U2', 'U3', 'U4', 'Re-roll', 'V1', 'V2', 'V3', 'V4']);
    const image = await (await client.midjourney.image(grid.imageUrl!)).buffer();
    assert.deepEqual(pngSize(image), { width: 512, height: 512 });
    const u2 = grid.buttons.find((b) => b.label === 'U2')!;
    const upId = await client.midjourney.action(grid.id, u2.customId);
    const up = await client.midjourney.waitFor(upId);
    assert.equal(up.action, 'UPSCALE');
    assert.deepEqual(up.buttons, [], 'an upscale has no U/V buttons');
    assert.equal(demoKey().usedQuota - before, Math.round((0.1 + 0.05) * 500_000), 'mj_imagine $0.10 + mj_upscale $0.05');
  });

  it("Midjourney's answers as new-api sends them: a banned word is code 24 (not billed), an unknown task is HTTP 400 task_no_found", async () => {
    const { client } = clientWithClock();
    const before = demoKey().usedQuota;
    await assert.rejects(
      client.midjourney.imagine({ prompt: 'a banned thing' }),
      (e: unknown) => e instanceof GatewayError && e.code === '24' && /可能包含敏感词/.test(e.message),
    );
    assert.equal(demoKey().usedQuota, before);
    await assert.rejects(client.midjourney.fetch('1234'), (e: unknown) => e instanceof BadRequestError && e.code === '4' && /task_no_found/.test(e.message));
    await assert.rejects(client.midjourney.imagine({ prompt: '  ' }), ValidationError);
    const raw = (await (
      await fetch(`${ctx.emu.url}/mj/submit/imagine`, { method: 'POST', headers: keyHeaders, body: JSON.stringify({ prompt: 'a fox' }) })
    ).json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(raw).sort(), ['code', 'description', 'properties', 'result'], "MidjourneyResponse's fields");
    const task = (await (await fetch(`${ctx.emu.url}/mj/task/${String(raw.result)}/fetch`, { headers: keyHeaders })).json()) as Record<string, unknown>;
    // MidjourneyDto's json tags (dto/midjourney.go).
    assert.deepEqual(
      Object.keys(task).sort(),
      [
        'action',
        'botType',
        'buttons',
        'customId',
        'description',
        'failReason',
        'finishTime',
        'id',
        'imageUrl',
        'maskBase64',
        'progress',
        'prompt',
        'promptEn',
        'properties',
        'startTime',
        'state',
        'status',
        'submitTime',
        'videoUrl',
        'videoUrls',
      ].sort(),
    );
  });
});
