import { extname } from 'node:path';
import { aac, flac, oggOpus } from './codecs';
import { mp3, readMp3Text, readWav, speechSeconds, synthesizePcm, wavFromPcm } from './media';
import { openAiError, parseForm, type Ctx } from './server';
import { asText } from './values';

type Json = Record<string, unknown>;

const FIRST = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer', 'verse', 'marin', 'cedar'];
const SECOND = [
  'Zephyr',
  'Puck',
  'Charon',
  'Kore',
  'Fenrir',
  'Leda',
  'Orus',
  'Aoede',
  'Callirrhoe',
  'Autonoe',
  'Enceladus',
  'Iapetus',
  'Umbriel',
  'Algieba',
  'Despina',
  'Erinome',
  'Algenib',
  'Rasalgethi',
  'Laomedeia',
  'Achernar',
  'Alnilam',
  'Schedar',
  'Gacrux',
  'Pulcherrima',
  'Achird',
  'Zubenelgenubi',
  'Vindemiatrix',
  'Sadachbia',
  'Sadaltager',
  'Sulafat',
];

interface SpeechRules {
  family: 1 | 2;
  speed: boolean;
  instructions: boolean;
  formats: string[];
}
const RULES: Record<string, SpeechRules> = {
  'tts-1': { family: 1, speed: true, instructions: false, formats: ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] },
  'tts-1-hd': { family: 1, speed: true, instructions: false, formats: ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] },
  'gpt-4o-mini-tts': { family: 1, speed: false, instructions: true, formats: ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] },
  'gemini-2.5-flash-preview-tts': { family: 2, speed: false, instructions: true, formats: ['wav', 'pcm'] },
};
/** Content types the real API answers with, per format. */
const CONTENT_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** Real, decodable audio of the speech in every format (24 kHz like the real API). */
function encodeSpeech(format: string, text: string, speed: number): Buffer {
  const seconds = speechSeconds(text, speed);
  switch (format) {
    case 'wav':
      return wavFromPcm(synthesizePcm(text, speed), text);
    case 'pcm':
      return synthesizePcm(text, speed);
    case 'flac':
      return flac(synthesizePcm(text, speed), 24_000, text);
    case 'aac':
      return aac(seconds);
    case 'opus':
      return oggOpus(seconds, text);
    default:
      return mp3(text, seconds);
  }
}

/** The gateway maps a first-family voice onto the second family (by position in the lists). */
export function mapVoice(voice: string): string {
  const i = FIRST.indexOf(voice.toLowerCase());
  return i >= 0 ? SECOND[i] : voice;
}

export function handleSpeech(ctx: Ctx): void {
  const { emu, res } = ctx;
  const begun = emu.beginJson(ctx, 'speech');
  if (!begun) return;
  const { body, model, auth } = begun;
  const rules = RULES[model.id];
  const bad = (message: string) => openAiError(res, 400, message, 'invalid_request_error', 'invalid_parameter');
  if (typeof body.input !== 'string' || body.input.length === 0) return bad('input is required.');
  if (body.input.length > 4096) return bad(`input is ${body.input.length} characters; the limit is 4096 (audio input text too long).`);
  if (typeof body.voice !== 'string' || !body.voice) return bad('voice is required.');
  const format = asText(body.response_format, 'mp3');
  if (!rules.formats.includes(format)) return bad(`${model.id} supports only ${rules.formats.join(', ')}.`);
  if (body.speed !== undefined) {
    if (!rules.speed) return bad(`${model.id} does not support speed.`);
    if (typeof body.speed !== 'number' || body.speed < 0.25 || body.speed > 4) return bad('speed must be between 0.25 and 4.0.');
  }
  if (body.instructions !== undefined && !rules.instructions) return bad(`${model.id} does not accept instructions.`);
  let voice = body.voice;
  if (rules.family === 1 && !FIRST.includes(voice.toLowerCase())) return bad(`Unknown voice ${voice} for ${model.id}.`);
  if (rules.family === 2) {
    voice = mapVoice(voice);
    if (!SECOND.includes(voice)) return bad(`Unknown voice ${body.voice} for ${model.id}.`);
  }
  const speed = typeof body.speed === 'number' ? body.speed : 1;
  emu.store.spend(auth.key, body.input.length * model.ratio, { model: model.id, prompt: body.input.length });
  const audio = encodeSpeech(format, body.input, speed);
  res.writeHead(200, { 'content-type': CONTENT_TYPES[format] ?? 'audio/mpeg', 'content-length': audio.length, 'x-voice': voice });
  res.end(audio);
}

const UPLOAD_EXTENSIONS = new Set(['.mp3', '.mp4', '.mpeg', '.mpga', '.m4a', '.wav', '.webm']);

function stamp(seconds: number, sep: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${sep}${pad(ms % 1000, 3)}`;
}

/** The real API names the language (ISO-639-1 in, English name out). */
const LANGUAGE_NAMES: Record<string, string> = {
  en: 'english',
  fr: 'french',
  de: 'german',
  es: 'spanish',
  it: 'italian',
  pt: 'portuguese',
  nl: 'dutch',
  ru: 'russian',
  zh: 'chinese',
  ja: 'japanese',
  ko: 'korean',
  ar: 'arabic',
  hi: 'hindi',
  pl: 'polish',
  tr: 'turkish',
  sv: 'swedish',
  uk: 'ukrainian',
};

interface Segment {
  id: number;
  seek: number;
  start: number;
  end: number;
  text: string;
  tokens: number[];
  temperature: number;
  avg_logprob: number;
  compression_ratio: number;
  no_speech_prob: number;
}

/** Segments at sentence ends, timed in proportion to their length. */
function segmentsOf(text: string, duration: number): Segment[] {
  const parts =
    text
      .match(/[^.!?]+[.!?]*\s*/g)
      ?.map((s) => s.trim())
      .filter(Boolean) ?? [];
  const total = Math.max(
    1,
    parts.reduce((n, p) => n + p.length, 0),
  );
  let at = 0;
  return parts.map((p, id) => {
    const start = (at / total) * duration;
    at += p.length;
    const end = Math.round((at / total) * duration * 1000) / 1000;
    // The fields Whisper's verbose_json carries per segment (the numbers are plausible, fixed).
    const tokens = Array.from({ length: Math.max(1, Math.ceil(p.length / 4)) }, (_, k) => 50_364 + ((p.charCodeAt(k % p.length) * 31 + k) % 1000));
    return {
      id,
      seek: Math.floor(start * 100),
      start: Math.round(start * 1000) / 1000,
      end,
      text: ` ${p}`,
      tokens,
      temperature: 0,
      avg_logprob: -0.21,
      compression_ratio: 1.35,
      no_speech_prob: 0.002,
    };
  });
}

export function handleTranscription(task: 'transcribe' | 'translate') {
  return async (ctx: Ctx): Promise<void> => {
    const { emu, res } = ctx;
    const bad = (message: string) => openAiError(res, 400, message, 'invalid_request_error', 'invalid_parameter');
    const form = await parseForm(ctx);
    if (!form) return bad('The body must be multipart/form-data.');
    const model = emu.requireModel(ctx, form.get('model'), 'openai', 'transcription');
    if (!model) return;
    const auth = emu.authorize(ctx, 'bearer', model, 'openai');
    if (!auth.ok) return;
    const file = form.get('file');
    if (!file || typeof file === 'string') return bad('file is required.');
    if (!UPLOAD_EXTENSIONS.has(extname(file.name).toLowerCase()))
      return bad(`Unsupported file type ${extname(file.name)}; use mp3, mp4, mpeg, mpga, m4a, wav or webm.`);
    if (file.size > 25 * 1024 * 1024) return openAiError(res, 413, 'The file is over 25 MB.', 'invalid_request_error', 'file_too_large');
    const format = asText(form.get('response_format'), 'json');
    if (!['json', 'text', 'srt', 'verbose_json', 'vtt'].includes(format)) return bad(`Unknown response_format ${format}.`);
    const granularities = form.getAll('timestamp_granularities[]').map(String);
    if (granularities.length > 0 && format !== 'verbose_json') return bad('timestamp_granularities[] needs response_format verbose_json.');
    const t = form.get('temperature');
    if (t !== null && !(Number(t) >= 0 && Number(t) <= 1)) return bad('temperature must be between 0 and 1.');
    if (task === 'translate' && form.get('language') !== null) return bad('translations take no language.');

    const bytes = Buffer.from(await file.arrayBuffer());
    const wav = readWav(bytes);
    const mp3Info = wav ? undefined : readMp3Text(bytes);
    const text = (wav?.text ?? mp3Info?.text ?? '').trim() || '[inaudible]';
    const duration = wav?.seconds ?? mp3Info?.seconds ?? bytes.length / 16_000;
    emu.store.spend(auth.key, Math.ceil(duration) * model.ratio, { model: model.id });
    const segments = segmentsOf(text, duration);
    const send = (type: string, out: string) => {
      res.writeHead(200, { 'content-type': type });
      res.end(out);
    };
    switch (format) {
      case 'text':
        return send('text/plain; charset=utf-8', text);
      case 'srt':
        return send(
          'text/plain; charset=utf-8',
          segments.map((s, i) => `${i + 1}\n${stamp(s.start, ',')} --> ${stamp(s.end, ',')}\n${s.text.trim()}\n`).join('\n'),
        );
      case 'vtt':
        return send(
          'text/vtt; charset=utf-8',
          `WEBVTT\n\n${segments.map((s) => `${stamp(s.start, '.')} --> ${stamp(s.end, '.')}\n${s.text.trim()}\n`).join('\n')}`,
        );
      case 'verbose_json': {
        const code = asText(form.get('language'), 'en').toLowerCase();
        const out: Json = { task, language: task === 'translate' ? 'english' : (LANGUAGE_NAMES[code] ?? code), duration, text };
        if (granularities.length === 0 || granularities.includes('segment')) out.segments = segments;
        if (granularities.includes('word')) {
          const words = text.split(/\s+/).filter(Boolean);
          out.words = words.map((word, i) => ({ word, start: (i / words.length) * duration, end: ((i + 1) / words.length) * duration }));
        }
        return send('application/json', JSON.stringify(out));
      }
      default:
        return send('application/json', JSON.stringify({ text }));
    }
  };
}
