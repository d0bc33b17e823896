import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { ImageOutcome } from '../../src/assets/host/images';
import type { ModerationOutcome } from '../../src/assets/host/moderation';
import type { SpeakOutcome } from '../../src/assets/host/speech';
import type { TranscribeOutcome } from '../../src/assets/host/transcribe';
import type { VideoJob, VideoJobs } from '../../src/assets/host/videoJobs';
import { png, pngSize, readMp3Text, readWav } from '../emulator/media';
import { config } from './config';
import { api, connectToEmulator, emulatorControl, emulatorRequests, runCommand, until } from './helpers';

const folder = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const run = runCommand;

async function lastNotice(): Promise<string> {
  const { testing } = await api();
  return testing.services.notices.at(-1)?.message ?? '';
}

/** The requests a media command makes; other traffic is the extension's own background work. */
const MEDIA_ENDPOINT = /^POST \/(v1\/(audio|moderations|videos)|imagegen\/)/;

/**
 * Asserts the command was refused with a message matching `re`, and sent nothing to the media
 * endpoints. Only those are counted: after an earlier test spends, the status bar and account
 * tree refresh (`GET /v1/models`, `GET /api/user/self`) and may reach the emulator meanwhile.
 */
async function refused<T>(re: RegExp, command: () => Thenable<T | undefined>): Promise<void> {
  const media = (paths: string[]) => paths.filter((p) => MEDIA_ENDPOINT.test(p));
  const before = media(await emulatorRequests()).length;
  const out = await command();
  assert.equal(out, undefined, 'no result');
  assert.match(await lastNotice(), re);
  assert.deepEqual(media(await emulatorRequests()).slice(before), [], 'nothing was sent');
}

function writePng(name: string, width: number, height: number, pixel?: (x: number, y: number) => [number, number, number]): vscode.Uri {
  const path = join(folder(), 'pictures', name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, png(width, height, 42, pixel));
  return vscode.Uri.file(path);
}

/** Waits until the job reaches an end state (downloaded, failed, cancelled, or a failed download). */
function settled(jobs: VideoJobs, id: string): Promise<VideoJob> {
  return until(`video job ${id} to settle`, () => {
    const job = jobs.get(id);
    return job && (job.error || !['queued', 'in_progress', 'completed'].includes(job.status)) ? job : undefined;
  });
}

function mp4Seconds(buf: Buffer): number {
  assert.equal(buf.toString('ascii', 4, 8), 'ftyp');
  for (let pos = 0; pos + 8 <= buf.length; pos += buf.readUInt32BE(pos)) {
    if (buf.toString('ascii', pos + 4, pos + 8) === 'moov') {
      const mvhd = pos + 16;
      return buf.readUInt32BE(mvhd + 16) / buf.readUInt32BE(mvhd + 12);
    }
  }
  throw new Error('no moov box');
}

describe('media commands in a real VS Code', function () {
  this.timeout(90_000);
  before(async () => {
    await connectToEmulator();
  });

  describe('image actions on a workspace image', () => {
    let source: vscode.Uri;
    before(() => {
      source = writePng('cat photo.png', 320, 240);
    });

    it('Remix keeps the weight and speed, prices V3 remix, saves beside the source name and opens it', async () => {
      const out = await run<ImageOutcome>('modelGateway.image.remix', source, {
        prompt: 'as a watercolour',
        weight: 80,
        rendering_speed: 'TURBO',
        confirmed: true,
      });
      assert.ok(out);
      assert.equal(out.priceDollars, 0.03);
      assert.equal(out.files.length, 1);
      assert.match(basename(out.files[0]), /^cat photo-remix(-\d+)?\.png$/);
      assert.ok(pngSize(readFileSync(out.files[0])));
      assert.match(vscode.window.tabGroups.activeTabGroup.activeTab?.label ?? '', /cat photo-remix/);
    });

    it('Upscale doubles the resolution for $0.06; Replace background keeps the size', async () => {
      const up = await run<ImageOutcome>('modelGateway.image.upscale', source, { resemblance: 70, detail: 30, confirmed: true });
      assert.equal(up?.priceDollars, 0.06);
      assert.deepEqual(pngSize(readFileSync(up.files[0])), { width: 640, height: 480 });
      const bg = await run<ImageOutcome>('modelGateway.image.replaceBackground', source, {
        prompt: 'a beach at sunset',
        rendering_speed: 'QUALITY',
        confirmed: true,
      });
      assert.equal(bg?.priceDollars, 0.09);
      assert.deepEqual(pngSize(readFileSync(bg.files[0])), { width: 320, height: 240 });
    });

    it('Edit with a mask: V3 and the legacy V_2 models; a mask under 10% black or of another size is refused before upload', async () => {
      const mask = writePng('mask-half.png', 320, 240, (x) => (x < 160 ? [0, 0, 0] : [255, 255, 255]));
      const v3 = await run<ImageOutcome>('modelGateway.image.edit', source, {
        mask: mask.fsPath,
        model: 'V_3',
        prompt: 'a hat',
        rendering_speed: 'TURBO',
        confirmed: true,
      });
      assert.equal(v3?.priceDollars, 0.06);
      assert.deepEqual(pngSize(readFileSync(v3.files[0])), { width: 320, height: 240 });
      const legacy = await run<ImageOutcome>('modelGateway.image.edit', source, { mask: mask.fsPath, model: 'V_2_TURBO', prompt: 'a hat', confirmed: true });
      assert.equal(legacy?.priceDollars, 0.05);
      assert.ok(existsSync(legacy.files[0]));

      const thin = writePng('mask-thin.png', 320, 240, (x) => (x < 16 ? [0, 0, 0] : [255, 255, 255]));
      await refused(/covers 5\.0% of the image; it must cover at least 10%/, () =>
        run('modelGateway.image.edit', source, { mask: thin.fsPath, model: 'V_3', prompt: 'a hat', rendering_speed: 'TURBO', confirmed: true }),
      );
      const small = writePng('mask-small.png', 100, 100, () => [0, 0, 0]);
      await refused(/mask is 100x100 but the image is 320x240/, () =>
        run('modelGateway.image.edit', source, { mask: small.fsPath, model: 'V_3', prompt: 'x', confirmed: true }),
      );
      await refused(/edit is supported only by V_2 and V_2_TURBO/, () =>
        run('modelGateway.image.edit', source, { mask: mask.fsPath, model: 'V_2A', prompt: 'a hat', confirmed: true }),
      );
    });

    it('Describe returns the descriptions and picking one copies it', async () => {
      // The person picks the first description in the quick pick that opens.
      (await api()).testing.services.prompts.answerNext(true);
      const descriptions = await run<string[]>('modelGateway.image.describe', source);
      assert.ok(descriptions && descriptions.length > 0);
      assert.match(descriptions[0], /320x240 image/);
      assert.equal(
        await until('the clipboard', async () => ((await vscode.env.clipboard.readText()) === descriptions[0] ? descriptions[0] : undefined), 5000),
        descriptions[0],
      );
    });

    it('Moderate image sends it to the multimodal model and names the image as what was scored', async () => {
      const pic = writePng('scene.png', 64, 64);
      writeFileSync(pic.fsPath, Buffer.concat([readFileSync(pic.fsPath), Buffer.from('tEXt blood and gore')]));
      const out = await run<ModerationOutcome>('modelGateway.image.moderate', pic, { quiet: true });
      assert.ok(out?.flagged);
      const violence = out.categories.find((c) => c.category === 'violence');
      assert.deepEqual(violence?.inputTypes, ['image']);
      assert.match(await lastNotice(), /scene\.png: flagged for .*violence \d\.\d\d \(image\)/);
    });

    it('image actions refuse a file that is not an image', async () => {
      await refused(/README\.md is not an image/, () => run('modelGateway.image.upscale', vscode.Uri.file(join(folder(), 'README.md')), { confirmed: true }));
    });
  });

  describe('speech', () => {
    const long = Array.from({ length: 120 }, (_, i) => `This is sentence number ${i} of a long text that will be spoken aloud.`).join(' ');

    it('splits text over 4,096 characters at sentence ends and joins the WAV parts exactly, then opens the player', async () => {
      assert.ok(long.length > 8192);
      const before = (await emulatorRequests()).filter((p) => p === 'POST /v1/audio/speech').length;
      const out = await run<SpeakOutcome>('modelGateway.speech.speakFile', undefined, {
        text: long,
        model: 'tts-1',
        voice: 'alloy',
        format: 'wav',
        confirmed: true,
      });
      assert.ok(out);
      assert.equal(out.parts, 3);
      assert.equal(out.partial, false);
      assert.equal((await emulatorRequests()).filter((p) => p === 'POST /v1/audio/speech').length - before, 3);
      assert.equal(out.files.length, 1);
      assert.match(basename(out.files[0]), /^speech-this-is-sentence-number-0-of-a\.wav$/);
      const info = readWav(readFileSync(out.files[0]));
      // The emulator speaks about 15 characters a second: the joined file is as long as all parts.
      assert.ok(info && Math.abs(info.seconds - long.length / 15) < 1, `${info?.seconds} s`);
      // The player of this file (another test's player may still be open).
      await until('the player of the joined file', () =>
        vscode.window.tabGroups.all
          .flatMap((g) => g.tabs)
          .find(
            (t) =>
              t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith('modelGateway.audioPlayer') && t.label === `▶ ${basename(out.files[0])}`,
          ),
      );
    });

    it('joins MP3 parts keeping one tag; a style model takes instructions but refuses speed before sending', async () => {
      const out = await run<SpeakOutcome>('modelGateway.speech.speakSelection', undefined, {
        text: long,
        model: 'gpt-4o-mini-tts',
        voice: 'coral',
        format: 'mp3',
        instructions: 'calm',
        confirmed: true,
        quiet: true,
      });
      assert.equal(out?.parts, 3);
      const mp3 = readMp3Text(readFileSync(out.files[0]));
      assert.ok(mp3 && Math.abs(mp3.seconds - long.length / 15) < 2, `${mp3?.seconds} s`);
      await refused(/speed.*gpt-4o-mini-tts does not support speed/, () =>
        run('modelGateway.speech.speakSelection', undefined, {
          text: 'Hello.',
          model: 'gpt-4o-mini-tts',
          voice: 'coral',
          format: 'mp3',
          speed: 2,
          confirmed: true,
          quiet: true,
        }),
      );
      await refused(/response_format.*supports only wav and pcm/, () =>
        run('modelGateway.speech.speakSelection', undefined, {
          text: 'Hello.',
          model: 'gemini-2.5-flash-preview-tts',
          voice: 'Kore',
          format: 'mp3',
          confirmed: true,
          quiet: true,
        }),
      );
    });

    it('speaks the selection of the active editor', async () => {
      const doc = await vscode.workspace.openTextDocument({ content: 'Ignore this. Speak only this part. And not this.' });
      const editor = await vscode.window.showTextDocument(doc);
      editor.selection = new vscode.Selection(0, 13, 0, 34);
      const out = await run<SpeakOutcome>('modelGateway.speech.speakSelection', undefined, {
        model: 'tts-1',
        voice: 'nova',
        format: 'wav',
        confirmed: true,
        quiet: true,
      });
      assert.equal(out?.characters, 'Speak only this part.'.length);
      assert.equal(readWav(readFileSync(out.files[0]))?.text, 'Speak only this part.');
    });

    it('keeps the parts spoken before a failing part as a -partial file and says so', async () => {
      await emulatorControl('faults', { path: '/v1/audio/speech', after: 3, fault: { kind: 'status', status: 400, message: 'audio input text too long' } });
      const out = await run<SpeakOutcome>('modelGateway.speech.speakFile', undefined, {
        text: long,
        model: 'tts-1',
        voice: 'alloy',
        format: 'pcm',
        maxChars: 1200,
        confirmed: true,
        quiet: true,
      });
      await emulatorControl('reset');
      assert.ok(out?.partial);
      assert.match(basename(out.files[0]), /-partial\.pcm$/);
      const seconds = readFileSync(out.files[0]).length / 48_000;
      assert.ok(seconds > 0 && seconds < long.length / 15 - 10, `${seconds} s kept`);
      assert.match(
        await lastNotice(),
        /Speech stopped at part \d+ of \d+ \(The gateway rejected the request: audio input text too long\)\. The \d part\(s\) spoken before it are saved/,
      );
    });
  });

  describe('transcription and translation', () => {
    let audio: vscode.Uri;
    before(async () => {
      const out = await run<SpeakOutcome>('modelGateway.speech.speakFile', undefined, {
        text: 'The quick brown fox. It jumps over the lazy dog.',
        model: 'tts-1',
        voice: 'alloy',
        format: 'wav',
        confirmed: true,
        quiet: true,
      });
      audio = vscode.Uri.file(out!.files[0]);
    });

    it('Transcribe Audio writes SRT beside the audio and opens it', async () => {
      const out = await run<TranscribeOutcome>('modelGateway.audio.transcribe', audio, { model: 'whisper-1', format: 'srt', language: 'en', confirmed: true });
      assert.ok(out);
      assert.equal(out.file, audio.fsPath.replace(/\.wav$/, '.srt'));
      assert.match(readFileSync(out.file, 'utf8'), /^1\n00:00:00,000 --> 00:00:0\d,\d{3}\nThe quick brown fox\./);
      assert.equal(vscode.window.activeTextEditor?.document.uri.fsPath, out.file);
    });

    it('Translate Audio to English writes .en.verbose.json; a language is refused for translations', async () => {
      const out = await run<TranscribeOutcome>('modelGateway.audio.translate', audio, { model: 'whisper-1', format: 'verbose_json', confirmed: true });
      assert.ok(out);
      assert.ok(out.file.endsWith('.en.verbose.json'), out.file);
      const json = JSON.parse(readFileSync(out.file, 'utf8')) as { text: string; segments: unknown[] };
      assert.match(json.text, /quick brown fox/);
      assert.equal(json.segments.length, 2);
      await refused(/translations always produce English/, () =>
        run('modelGateway.audio.translate', audio, { model: 'whisper-1', format: 'text', language: 'de' }),
      );
    });

    it('refuses files over 25 MB and unsupported types before upload, with the reason', async () => {
      const big = join(folder(), 'long-meeting.mp3');
      writeFileSync(big, '');
      truncateSync(big, 26 * 1024 * 1024);
      await refused(/long-meeting\.mp3 is 26\.0 MB; the gateway takes audio files of at most 25 MB/, () =>
        run('modelGateway.audio.transcribe', vscode.Uri.file(big), { model: 'whisper-1', format: 'text' }),
      );
      const ogg = join(folder(), 'voice.ogg');
      writeFileSync(ogg, 'OggS');
      await refused(/voice\.ogg is not an audio file the gateway accepts \(\.mp3, \.mp4/, () =>
        run('modelGateway.audio.transcribe', vscode.Uri.file(ogg), { model: 'whisper-1', format: 'text' }),
      );
    });
  });

  describe('moderation', () => {
    it('Check Moderation on text names the flagged categories with scores and the input scored, in a report', async () => {
      const out = await run<ModerationOutcome>('modelGateway.moderation.check', undefined, { text: 'I will attack them and there will be blood' });
      assert.ok(out?.flagged);
      const v = out.categories.find((c) => c.category === 'violence');
      assert.ok(v && v.score > 0.5);
      assert.deepEqual(v.inputTypes, ['text']);
      assert.ok(out.report);
      const report = vscode.workspace.textDocuments.find((d) => d.uri.toString() === out.report!.toString());
      assert.match(report?.getText() ?? '', /\| violence \| 0\.\d{4} \| \*\*flagged\*\* \| text \|/);
      assert.equal(report?.languageId, 'markdown');
    });

    it('checks the selection, says when nothing is flagged, and refuses images with the text-only model', async () => {
      const doc = await vscode.workspace.openTextDocument({ content: 'A friendly note about gardening.' });
      const editor = await vscode.window.showTextDocument(doc);
      editor.selection = new vscode.Selection(0, 0, 0, 16);
      const out = await run<ModerationOutcome>('modelGateway.moderation.check', undefined, { quiet: true });
      assert.equal(out?.flagged, false);
      assert.match(await lastNotice(), /the selection: nothing flagged/);
      const pic = writePng('plain.png', 8, 8);
      await refused(/image input needs the multimodal model "omni-moderation-latest"/, () =>
        run('modelGateway.image.moderate', pic, { model: 'text-moderation-latest', quiet: true }),
      );
    });
  });

  describe('video jobs', () => {
    before(async () => {
      await vscode.workspace.getConfiguration('modelGateway.assets').update('videoPollSeconds', 1, vscode.ConfigurationTarget.Workspace);
    });
    after(async () => {
      await vscode.workspace.getConfiguration('modelGateway.assets').update('videoPollSeconds', undefined, vscode.ConfigurationTarget.Workspace);
    });

    it('creates a job, shows it in the Video Jobs view, polls it through queued and in progress, and downloads the MP4', async () => {
      const { testing } = await api();
      const id = await run<string>('modelGateway.video.generate', {
        prompt: 'A paper boat on a river',
        model: 'sora-2',
        seconds: '8',
        size: '1280x720',
        confirmed: true,
      });
      assert.ok(id);
      assert.equal(testing.videoJobs.get(id)?.status, 'queued');
      const item = testing.videoJobs.getTreeItem(testing.videoJobs.get(id)!);
      assert.equal(item.contextValue, 'videoJob.active');
      await emulatorControl('clock', { advanceMs: 30_000 });
      await until('in progress', () => testing.videoJobs.get(id)?.status === 'in_progress');
      await emulatorControl('clock', { advanceMs: 60_000 });
      const job = await settled(testing.videoJobs, id);
      assert.equal(job.status, 'downloaded');
      assert.ok(job.file && job.file.startsWith(join(folder(), 'generated')) && basename(job.file) === 'video-a-paper-boat-on-a-river.mp4', job.file);
      assert.equal(mp4Seconds(readFileSync(job.file)), 8);
      assert.equal(testing.videoJobs.getTreeItem(job).contextValue, 'videoJob.done');
    });

    it('refuses a duration or size outside the model family before creating anything', async () => {
      await refused(/seconds.*sora-2 takes 4, 8, 12 seconds/, () =>
        run('modelGateway.video.generate', { prompt: 'x', model: 'sora-2', seconds: '6', size: '1280x720', confirmed: true }),
      );
      await refused(/size.*takes sizes 720p, 1080p, 4k/, () =>
        run('modelGateway.video.generate', { prompt: 'x', model: 'veo-3.1-fast-generate-preview', seconds: '4', size: '1280x720', confirmed: true }),
      );
    });

    it('cancel deletes the task on the gateway', async () => {
      const { testing } = await api();
      const id = await run<string>('modelGateway.video.generate', {
        prompt: 'to be cancelled',
        model: 'veo-3.1-fast-generate-preview',
        seconds: '4',
        size: '720p',
        confirmed: true,
      });
      assert.ok(id);
      await vscode.commands.executeCommand('modelGateway.videoJobs.cancel', id);
      assert.equal(testing.videoJobs.get(id)?.status, 'cancelled');
      assert.ok((await emulatorRequests()).includes(`DELETE /v1/videos/${id}`));
      const status = await fetch(`${config.emulatorUrl}/v1/videos/${id}`, { headers: { authorization: `Bearer ${config.demoKey}` } });
      assert.equal(status.status, 404);
    });

    it('a job survives a restart: a new manager over the stored state resumes polling and downloads it', async () => {
      const { testing } = await api();
      const id = await run<string>('modelGateway.video.generate', {
        prompt: 'Survives a reload',
        model: 'sora-2',
        seconds: '4',
        size: '720x1280',
        reference: writePng('first frame.png', 64, 64).fsPath,
        confirmed: true,
      });
      assert.ok(id);
      // The extension goes away (window closed) before the video is done…
      testing.videoJobs.dispose();
      await emulatorControl('clock', { advanceMs: 80_000 });
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(testing.videoJobs.get(id)?.status, 'queued', 'nothing polled while the extension was away');
      // …and activation builds a new manager over the same workspace state.
      const resumed = testing.newVideoJobs();
      try {
        resumed.resumeAll();
        const job = await settled(resumed, id);
        assert.equal(job.status, 'downloaded');
        assert.equal(mp4Seconds(readFileSync(job.file!)), 4);
      } finally {
        resumed.dispose();
      }
    });

    it('a failed task is reported with the gateway reason', async () => {
      const { testing } = await api();
      const jobs = testing.newVideoJobs();
      try {
        const id = await run<string>('modelGateway.video.generate', {
          prompt: 'this one will #fail',
          model: 'sora-2',
          seconds: '4',
          size: '720x1280',
          confirmed: true,
        });
        jobs.resumeAll();
        await emulatorControl('clock', { advanceMs: 30_000 });
        await settled(jobs, id!);
        assert.equal(jobs.get(id!)?.status, 'failed');
        assert.match(jobs.get(id!)?.error ?? '', /Video generation failed: The upstream provider rejected the prompt/);
        assert.equal(jobs.getTreeItem(jobs.get(id!)!).description, 'failed');
      } finally {
        jobs.dispose();
      }
    });
  });
});
