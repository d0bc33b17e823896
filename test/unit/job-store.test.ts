import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import * as gateway from '../../src/gateway';
import { readMp3Text } from '../emulator/media';
import { JobStore, type JobKind, type JobMemento, type StoredJob } from '../../src/assets/core/jobStore';
import { taskJobRules, videoJobRules, type JobRules, type TaskJob, type VideoJob } from '../../src/assets/core/jobs';
import { resultPath, UnsafeFileNameError } from '../../src/assets/core/names';
import { pngSize } from '../../src/assets/core/png';
import { clientFor, useEmulator } from './helpers';

/** The workspace state as VS Code keeps it: JSON, so a stored job comes back as a copy. */
class MemoryState implements JobMemento {
  readonly data = new Map<string, string>();
  get<T>(key: string, defaultValue: T): T {
    const v = this.data.get(key);
    return v === undefined ? defaultValue : (JSON.parse(v) as T);
  }
  update(key: string, value: unknown): Promise<void> {
    this.data.set(key, JSON.stringify(value));
    return Promise.resolve();
  }
}

/**
 * The one job store of the Video Jobs and the Music and Midjourney views (`src/assets/core/jobStore.ts`)
 * with the real rules of each kind, against the emulator; the host's part (notifications, the tree)
 * is a recorder here.
 */
describe('job store: videos, music and Midjourney jobs', () => {
  const ctx = useEmulator();
  let root: string;
  let dir: string;
  let seen: string[];
  const stores: { dispose(): void }[] = [];

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mg-jobs-'));
    dir = join(root, 'workspace', 'generated');
    mkdirSync(dir, { recursive: true });
    seen = [];
  });
  afterEach(() => {
    for (const s of stores.splice(0)) s.dispose();
    ctx.emu.faults.clear();
    rmSync(root, { recursive: true, force: true });
  });

  const client = () => clientFor(ctx.emu).client;
  const LIMIT = { maxBytes: 64 * 1024 * 1024, setting: 'modelGateway.assets.maxDownloadMegabytes' };

  /** A store whose host records what it is told; each poll moves the emulator's clock 10 s. */
  function storeOf<J extends StoredJob>(rules: JobRules<J>, state = new MemoryState(), configured = () => true): JobStore<J> {
    const kind: JobKind<J> = {
      ...rules,
      describe: (job) => job.status,
      assetsFolder: () => Promise.resolve(dir),
      noFolder: 'no folder',
      isConfigured: configured,
      pollMs: () => (ctx.emu.clock.advance(10_000), 1),
      warn: (message) => seen.push(`warn: ${message}`),
      changed: () => undefined,
      show: (_job, poll) => void poll((message) => seen.push(`report: ${message}`)),
      failed: (job) => seen.push(`failed: ${job.error}`),
      downloaded: (job) => seen.push(`downloaded: ${job.id}`),
      downloadFailed: (err) => seen.push(`download failed: ${err instanceof Error ? err.message : String(err)}`),
    };
    const store = new JobStore<J>(state, kind);
    stores.push(store);
    return store;
  }
  const taskStore = (state?: MemoryState) =>
    storeOf<TaskJob>(
      taskJobRules(
        client,
        () => gateway,
        () => LIMIT,
      ),
      state,
    );
  const videoStore = (state?: MemoryState) =>
    storeOf<VideoJob>(
      videoJobRules(
        client,
        () => gateway,
        () => LIMIT,
      ),
      state,
    );

  /** Resolves with the job once it has ended (or its download failed). */
  async function settled<J extends StoredJob>(store: JobStore<J>, id: string, ended: (job: J) => boolean): Promise<J> {
    for (let i = 0; i < 2000; i++) {
      const job = store.get(id);
      if (job && (job.error || ended(job))) return job;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`job ${id} did not settle: ${JSON.stringify(store.get(id))}`);
  }
  const taskEnded = (j: TaskJob) => ['downloaded', 'FAILURE', 'CANCEL'].includes(j.status);
  const newTask = (job: Partial<TaskJob> & Pick<TaskJob, 'id' | 'kind' | 'prompt'>): TaskJob => ({
    createdAt: Date.now(),
    status: 'SUBMITTED',
    files: [],
    ...job,
  });

  it('a song is polled through its statuses and its two clips are saved as MP3s', async () => {
    const c = client();
    const id = await c.suno.music({ gpt_description_prompt: 'a calm song about the sea', title: 'Sea Song' });
    const store = taskStore();
    await store.add(newTask({ kind: 'music', id, prompt: 'a calm song about the sea', title: 'Sea Song' }));
    const job = await settled(store, id, taskEnded);
    assert.equal(job.status, 'downloaded', JSON.stringify(job));
    assert.equal(job.progress, 100);
    assert.deepEqual(job.files.map((f) => basename(f)).sort(), readdirSync(dir).sort());
    assert.equal(job.files.length, 2);
    for (const f of job.files) assert.match(readMp3Text(readFileSync(f))?.text ?? '', /a calm song about the sea/);
    assert.ok(seen.includes('report: IN_PROGRESS') && seen.includes('report: downloading'), seen.join('\n'));
    assert.equal(seen.at(-1), `downloaded: ${id}`);
  });

  it('a failed song ends with the gateway’s reason; a task the gateway no longer knows ends failed', async () => {
    const c = client();
    const id = await c.suno.music({ prompt: 'lyrics #fail', tags: 'rock', title: 'Broken' });
    const store = taskStore();
    await store.add(newTask({ kind: 'music', id, prompt: 'lyrics #fail' }));
    const failed = await settled(store, id, taskEnded);
    assert.equal(failed.status, 'FAILURE');
    assert.match(failed.error ?? '', /Music generation failed: .*rejected the prompt/);
    assert.ok(
      seen.some((s) => /^failed: Music generation failed/.test(s)),
      seen.join('\n'),
    );

    await store.add(newTask({ kind: 'midjourney', id: '99999', prompt: 'gone' }));
    const gone = await settled(store, '99999', taskEnded);
    assert.equal(gone.status, 'FAILURE');
    assert.match(gone.error ?? '', /no longer knows this task/);
  });

  it('a status check that fails for a while (503) is retried; the job stays and finishes', async () => {
    const c = client();
    const id = await c.midjourney.imagine({ prompt: 'a paper boat' });
    ctx.emu.inject({ path: `/mj/task/${id}/fetch`, times: 4, fault: { kind: 'status', status: 503 } });
    const store = taskStore();
    await store.add(newTask({ kind: 'midjourney', id, prompt: 'a paper boat', action: 'IMAGINE' }));
    const job = await settled(store, id, taskEnded);
    assert.equal(job.status, 'downloaded');
    assert.ok(
      seen.some((s) => /^warn: task \d+: status check failed, will retry/.test(s)),
      seen.join('\n'),
    );
    assert.deepEqual(
      job.files.map((f) => basename(f)),
      ['mj-a-paper-boat.png'],
    );
    assert.deepEqual(pngSize(readFileSync(job.files[0])), { width: 512, height: 512 });
    assert.deepEqual(
      job.buttons?.map((b) => b.label),
      ['U1', 'U2', 'U3', 'U4', 'Re-roll', 'V1', 'V2', 'V3', 'V4'],
    );
  });

  it('jobs survive in the state: a new store lists them newest first, drops what does not parse, and resumes the unfinished', async () => {
    const state = new MemoryState();
    await state.update('modelGateway.videoJobs', [{ id: 'junk' }, 'not a job']);
    const c = client();
    const first = await c.videos.create({ model: 'sora-2', prompt: 'A paper boat on a river', seconds: '4', size: '720x1280' });
    const before = videoStore(state);
    await before.add({ id: first.id, model: 'sora-2', prompt: 'A paper boat on a river', createdAt: 1, status: first.status });
    before.dispose();
    await before.add({ id: 'video_later', model: 'sora-2', prompt: 'later', createdAt: 2, status: 'downloaded' });
    assert.deepEqual(
      before.list().map((j) => j.id),
      ['video_later', first.id],
      'newest first, the junk dropped',
    );
    assert.equal(before.get(first.id)?.status, 'queued', 'a disposed store polls nothing');

    const after = videoStore(state);
    after.resumeAll();
    const job = await settled(after, first.id, (j) => j.status === 'downloaded' || j.status === 'failed');
    assert.equal(job.status, 'downloaded', JSON.stringify(job));
    assert.equal(basename(job.file!), 'video-a-paper-boat-on-a-river.mp4');
  });

  it('a failed download keeps the job with its error; retry downloads it', async () => {
    const c = client();
    const id = await c.midjourney.imagine({ prompt: 'a fox' });
    ctx.emu.inject({ path: '/mj/image/', times: 3, fault: { kind: 'status', status: 500 } });
    const store = taskStore();
    await store.add(newTask({ kind: 'midjourney', id, prompt: 'a fox' }));
    const broken = await settled(store, id, taskEnded);
    assert.equal(broken.status, 'SUCCESS');
    assert.match(broken.error ?? '', /^Download failed: /);
    assert.ok(
      seen.some((s) => s.startsWith('download failed: ')),
      seen.join('\n'),
    );
    store.retry(id);
    const job = await settled(store, id, (j) => j.status === 'downloaded' && !j.error);
    assert.equal(job.status, 'downloaded');
    assert.deepEqual(readdirSync(dir), ['mj-a-fox.png']);
  });

  describe('names a hostile gateway chooses', () => {
    /** Every file under the test's folder: the workspace, its assets folder, and what is around them. */
    const filesUnder = (folder: string): string[] =>
      readdirSync(folder, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath, e.name));

    it('a Midjourney button label with "../" names a file in the assets folder, never outside it', async () => {
      const c = client();
      const grid = await c.midjourney.imagine({ prompt: 'a cat' });
      ctx.emu.clock.advance(60_000);
      const real = await c.midjourney.fetch(grid);
      // The gateway's word for the finished grid: its U1 button is labelled to climb out of the folder.
      const buttons = real.buttons.map((b) => (b.label === 'U1' ? { ...b, label: 'U1/../../../escaped' } : b));
      ctx.emu.inject({
        path: `/mj/task/${grid}/fetch`,
        times: 2,
        fault: { kind: 'status', status: 200, body: { id: grid, action: 'IMAGINE', status: 'SUCCESS', progress: '100%', imageUrl: real.imageUrl, buttons } },
      });
      const store = taskStore();
      await store.add(newTask({ kind: 'midjourney', id: grid, prompt: 'a cat', action: 'IMAGINE' }));
      const done = await settled(store, grid, taskEnded);
      const u1 = done.buttons!.find((b) => b.label.startsWith('U1'))!;
      assert.equal(u1.label, 'U1/../../../escaped', 'the label as the gateway sent it');
      // The person picks that button (midjourneyFollowUpCommand keeps its label on the new job).
      const next = await c.midjourney.action(grid, u1.customId);
      await store.add(newTask({ kind: 'midjourney', id: next, prompt: 'a cat', action: 'UPSCALE', label: u1.label }));
      const job = await settled(store, next, taskEnded);
      assert.equal(job.status, 'downloaded', JSON.stringify(job));
      const outside = filesUnder(root).filter((f) => !f.startsWith(`${dir}/`));
      assert.deepEqual(outside, [], 'nothing written outside the assets folder');
      assert.deepEqual(readdirSync(dir).sort(), ['mj-a-cat-u1escaped.png', 'mj-a-cat.png']);
      assert.deepEqual(job.files, [join(dir, 'mj-a-cat-u1escaped.png')]);
    });

    it('a song title with slashes, dots and a NUL is a name only', async () => {
      const c = client();
      const id = await c.suno.music({ gpt_description_prompt: 'a song' });
      ctx.emu.clock.advance(120_000);
      const real = await c.suno.fetch(id);
      const clips = real.songs.map((s, i) => ({ ...s, title: i === 0 ? '../../../escaped\0' : '/etc/passwd' }));
      ctx.emu.inject({
        path: `/suno/fetch/${id}`,
        times: 3,
        fault: {
          kind: 'status',
          status: 200,
          body: { code: 'success', message: '', data: { task_id: id, action: 'MUSIC', status: 'SUCCESS', progress: '100%', data: clips } },
        },
      });
      const store = taskStore();
      await store.add(newTask({ kind: 'music', id, prompt: 'a song' }));
      const job = await settled(store, id, taskEnded);
      assert.equal(job.status, 'downloaded', JSON.stringify(job));
      assert.deepEqual(
        filesUnder(root).filter((f) => !f.startsWith(`${dir}/`)),
        [],
      );
      assert.deepEqual(readdirSync(dir).sort(), ['music-escaped-1.mp3', 'music-etcpasswd-2.mp3']);
    });

    it('the last check: a name that would land outside the assets folder is refused; a link planted where a result goes is passed over', async () => {
      await assert.rejects(
        resultPath(dir, '../escaped', '.png'),
        (e: unknown) => e instanceof UnsafeFileNameError && /outside the assets folder/.test(e.message) && /Nothing was written/.test(e.message),
      );
      await assert.rejects(resultPath(dir, 'mj/../../../escaped', '.png'), UnsafeFileNameError);
      // A repository (or anything) left a link where the next grid would be saved, leading out.
      symlinkSync(join(root, 'outside.png'), join(dir, 'mj-a-cat.png'));
      assert.equal(await resultPath(dir, 'mj-a-cat', '.png'), join(dir, 'mj-a-cat-2.png'));
      const c = client();
      const id = await c.midjourney.imagine({ prompt: 'a cat' });
      const store = taskStore();
      await store.add(newTask({ kind: 'midjourney', id, prompt: 'a cat' }));
      const job = await settled(store, id, taskEnded);
      assert.deepEqual(job.files, [join(dir, 'mj-a-cat-2.png')]);
      assert.equal(existsSync(join(root, 'outside.png')), false, 'nothing written through the link');
    });
  });

  describe('a download larger than modelGateway.assets.maxDownloadMegabytes', () => {
    it('a video over the cap leaves the job with the error naming the setting and the limit, and no file at all', async () => {
      const c = client();
      const video = await c.videos.create({ model: 'sora-2', prompt: 'A long river', seconds: '4', size: '720x1280' });
      const small = { maxBytes: 1024, setting: 'modelGateway.assets.maxDownloadMegabytes' };
      const store = storeOf<VideoJob>(
        videoJobRules(
          client,
          () => gateway,
          () => small,
        ),
      );
      await store.add({ id: video.id, model: 'sora-2', prompt: 'A long river', createdAt: Date.now(), status: video.status });
      const job = await settled(store, video.id, (j) => j.status === 'downloaded' || j.status === 'failed');
      assert.equal(job.status, 'completed', 'done at the gateway, not downloaded');
      assert.match(
        job.error ?? '',
        /^Download failed: Video download stopped: .* over the limit of 0\.000977 MB \(raise modelGateway\.assets\.maxDownloadMegabytes to allow it\)\. Nothing was saved\.$/,
      );
      assert.ok(
        seen.some((s) => /^download failed: Video download stopped/.test(s)),
        seen.join('\n'),
      );
      assert.deepEqual(readdirSync(dir), [], 'no video, no partial file');
    });
  });
});
