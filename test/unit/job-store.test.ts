import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import * as gateway from '../../src/gateway';
import { readMp3Text } from '../emulator/media';
import { JobStore, type JobKind, type JobMemento, type StoredJob } from '../../src/assets/core/jobStore';
import { taskJobRules, videoJobRules, type JobRules, type TaskJob, type VideoJob } from '../../src/assets/core/jobs';
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
  const taskStore = (state?: MemoryState) => storeOf<TaskJob>(taskJobRules(client, () => gateway), state);
  const videoStore = (state?: MemoryState) => storeOf<VideoJob>(videoJobRules(client, () => gateway), state);

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
  const newTask = (job: Partial<TaskJob> & Pick<TaskJob, 'id' | 'kind' | 'prompt'>): TaskJob => ({ createdAt: Date.now(), status: 'SUBMITTED', files: [], ...job });

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
    assert.ok(seen.some((s) => /^failed: Music generation failed/.test(s)), seen.join('\n'));

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
    assert.ok(seen.some((s) => /^warn: task \d+: status check failed, will retry/.test(s)), seen.join('\n'));
    assert.deepEqual(job.files.map((f) => basename(f)), ['mj-a-paper-boat.png']);
    assert.deepEqual(pngSize(readFileSync(job.files[0])), { width: 512, height: 512 });
    assert.deepEqual(job.buttons?.map((b) => b.label), ['U1', 'U2', 'U3', 'U4', 'Re-roll', 'V1', 'V2', 'V3', 'V4']);
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
    assert.deepEqual(before.list().map((j) => j.id), ['video_later', first.id], 'newest first, the junk dropped');
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
    assert.ok(seen.some((s) => s.startsWith('download failed: ')), seen.join('\n'));
    store.retry(id);
    const job = await settled(store, id, (j) => j.status === 'downloaded' && !j.error);
    assert.equal(job.status, 'downloaded');
    assert.deepEqual(readdirSync(dir), ['mj-a-fox.png']);
  });
});
