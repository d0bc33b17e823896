import { MAX_AUDIO_UPLOAD_BYTES, MAX_SPEECH_INPUT } from '../../common/mediaLimits';
import { Multipart } from '../core/multipart';
import * as z from '../core/z';
import { BinaryResponse } from '../core/binary';
import { GatewayError, ValidationError } from '../core/errors';
import { prepareUpload, type Upload } from '../core/files';
import type { Transport } from '../core/transport';
import { parseResponse, validateRequest } from '../core/validate';
import type { RequestOptions } from '../core/requestOptions';

export { MAX_AUDIO_UPLOAD_BYTES, MAX_SPEECH_INPUT };
export const AUDIO_UPLOAD_EXTENSIONS = ['mp3', 'mp4', 'mpeg', 'mpga', 'm4a', 'wav', 'webm'] as const;

export const FIRST_FAMILY_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer', 'verse', 'marin', 'cedar'] as const;
/** The second family's 30 presets (the spec names eight of them; the rest are that family's published list). */
export const SECOND_FAMILY_VOICES = [
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
] as const;

export type SpeechFormat = 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm';

/**
 * What a speech model accepts. The spec describes the models by kind without naming them; these
 * are the ids gateways use for each kind. Unknown models get only the universal checks.
 */
export interface SpeechModelInfo {
  kind: 'standard' | 'hd' | 'conversational' | 'style' | 'multi-speaker';
  voiceFamily: 1 | 2;
  speed: boolean;
  instructions: boolean;
  formats: readonly SpeechFormat[];
}

const ALL_FORMATS: readonly SpeechFormat[] = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'];

export const SPEECH_MODELS: Record<string, SpeechModelInfo> = {
  'tts-1': { kind: 'standard', voiceFamily: 1, speed: true, instructions: false, formats: ALL_FORMATS },
  'tts-1-hd': { kind: 'hd', voiceFamily: 1, speed: true, instructions: false, formats: ALL_FORMATS },
  'gpt-4o-audio-preview': { kind: 'conversational', voiceFamily: 1, speed: true, instructions: false, formats: ALL_FORMATS },
  'gpt-4o-mini-tts': { kind: 'style', voiceFamily: 1, speed: false, instructions: true, formats: ALL_FORMATS },
  'gemini-2.5-flash-preview-tts': { kind: 'multi-speaker', voiceFamily: 2, speed: false, instructions: true, formats: ['wav', 'pcm'] },
  'gemini-2.5-pro-preview-tts': { kind: 'multi-speaker', voiceFamily: 2, speed: false, instructions: true, formats: ['wav', 'pcm'] },
};

export function speechModelInfo(model: string): SpeechModelInfo | undefined {
  return SPEECH_MODELS[model];
}

/** Voices to offer for a model: its own family, or both when the model is unknown. */
export function voicesFor(model: string): string[] {
  const info = SPEECH_MODELS[model];
  if (!info) return [...FIRST_FAMILY_VOICES, ...SECOND_FAMILY_VOICES];
  return info.voiceFamily === 1 ? [...FIRST_FAMILY_VOICES] : [...SECOND_FAMILY_VOICES];
}

const isFirst = (v: string) => (FIRST_FAMILY_VOICES as readonly string[]).includes(v.toLowerCase());
const isSecond = (v: string) => SECOND_FAMILY_VOICES.some((s) => s.toLowerCase() === v.toLowerCase());

export const SpeechRequestSchema = z
  .looseObject({
    model: z.string({ error: 'model is required' }).min(1, 'model must not be empty'),
    input: z
      .string({ error: 'input is required (the text to speak)' })
      .min(1, 'must not be empty')
      .max(MAX_SPEECH_INPUT, `must be at most ${MAX_SPEECH_INPUT} characters; split longer text`),
    voice: z.string({ error: 'voice is required' }).min(1, 'voice must not be empty'),
    response_format: z.enum(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'], { error: 'must be mp3, opus, aac, flac, wav or pcm' }).optional(),
    speed: z.number().min(0.25, 'must be between 0.25 and 4.0').max(4, 'must be between 0.25 and 4.0').optional(),
    instructions: z.string().optional(),
  })
  .superRefine((r, ctx) => {
    const info = SPEECH_MODELS[r.model];
    if (!info) return;
    if (r.response_format && !info.formats.includes(r.response_format)) {
      ctx.addIssue({ code: 'custom', path: ['response_format'], message: `${r.model} supports only ${info.formats.join(' and ')}` });
    }
    if (r.speed !== undefined && !info.speed) {
      ctx.addIssue({ code: 'custom', path: ['speed'], message: `${r.model} does not support speed` });
    }
    if (r.instructions !== undefined && !info.instructions) {
      ctx.addIssue({
        code: 'custom',
        path: ['instructions'],
        message: `${r.model} does not take instructions (only the style-controllable and multi-speaker models do)`,
      });
    }
    // A first-family name on a second-family model is mapped by the gateway (spec); anything
    // else outside the model's family is refused here.
    const known = info.voiceFamily === 1 ? isFirst(r.voice) : isSecond(r.voice) || isFirst(r.voice);
    if (!known) {
      ctx.addIssue({
        code: 'custom',
        path: ['voice'],
        message: `"${r.voice}" is not a voice of ${r.model}; choose one of ${voicesFor(r.model).slice(0, 8).join(', ')}…`,
      });
    }
  });

export type SpeechRequest = z.input<typeof SpeechRequestSchema>;

export type TranscriptionFormat = 'json' | 'text' | 'srt' | 'verbose_json' | 'vtt';

const TranscriptionOptions = z
  .looseObject({
    model: z.string({ error: 'model is required' }).min(1, 'model must not be empty'),
    language: z
      .string()
      .regex(/^[a-z]{2}$/, 'must be an ISO-639-1 code such as "en"')
      .optional(),
    prompt: z.string().optional(),
    response_format: z.enum(['json', 'text', 'srt', 'verbose_json', 'vtt'], { error: 'must be json, text, srt, verbose_json or vtt' }).optional(),
    temperature: z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1').optional(),
    timestamp_granularities: z.array(z.enum(['word', 'segment'], { error: 'must be "word" or "segment"' })).optional(),
  })
  .superRefine((r, ctx) => {
    if (r.timestamp_granularities && r.timestamp_granularities.length > 0 && r.response_format !== 'verbose_json') {
      ctx.addIssue({ code: 'custom', path: ['timestamp_granularities'], message: 'needs response_format "verbose_json"' });
    }
  });

export type TranscriptionRequest = z.input<typeof TranscriptionOptions> & { file: Upload };

/**
 * Checks a transcription (or, with `translation`, a translation) request without sending it:
 * the same rules `create` applies, for callers that ask the person before spending.
 */
export function validateTranscription(options: z.input<typeof TranscriptionOptions>, translation: boolean): z.output<typeof TranscriptionOptions> {
  const req = validateRequest(TranscriptionOptions, options);
  if (translation && req.language !== undefined) {
    throw new ValidationError([{ path: 'language', message: 'translations always produce English and take no language' }]);
  }
  return req;
}

const VerboseSchema = z.looseObject({
  text: z.string(),
  language: z.string().optional(),
  duration: z.number().optional(),
  task: z.string().optional(),
  segments: z.array(z.looseObject({ id: z.number(), start: z.number(), end: z.number(), text: z.string() })).optional(),
  words: z.array(z.looseObject({ word: z.string(), start: z.number(), end: z.number() })).optional(),
});
export type VerboseTranscription = z.output<typeof VerboseSchema>;

type TranscriptionResult<F> = F extends 'verbose_json' ? VerboseTranscription : F extends 'json' | undefined ? { text: string } : string;

export class Speech {
  constructor(private readonly transport: Transport) {}

  /** Synthesises speech; the answer's bytes can be buffered, piped, or written to a file. */
  async create(body: SpeechRequest, opts: RequestOptions = {}): Promise<BinaryResponse> {
    const req = validateRequest(SpeechRequestSchema, body);
    const res = await this.transport.send({
      method: 'POST',
      path: '/v1/audio/speech',
      auth: 'bearer',
      json: req,
      accept: 'application/octet-stream',
      signal: opts.signal,
    });
    return new BinaryResponse(res, 'Speech');
  }
}

class AudioTextEndpoint {
  constructor(
    private readonly transport: Transport,
    private readonly path: string,
    private readonly what: string,
    private readonly allowLanguage: boolean,
  ) {}

  async create<F extends TranscriptionFormat | undefined = undefined>(
    body: TranscriptionRequest & { response_format?: F },
    opts: RequestOptions = {},
  ): Promise<TranscriptionResult<F>> {
    const { file, ...rest } = body;
    const req = validateTranscription(rest, !this.allowLanguage);
    const upload = await prepareUpload('file', file, { extensions: AUDIO_UPLOAD_EXTENSIONS, maxBytes: MAX_AUDIO_UPLOAD_BYTES, limitText: '25 MB' });
    const form = new Multipart();
    form.append('model', req.model);
    if (req.language) form.append('language', req.language);
    if (req.prompt) form.append('prompt', req.prompt);
    if (req.response_format) form.append('response_format', req.response_format);
    if (req.temperature !== undefined) form.append('temperature', String(req.temperature));
    for (const g of req.timestamp_granularities ?? []) form.append('timestamp_granularities[]', g);
    form.append('file', upload.blob, upload.filename);
    const format = req.response_format ?? 'json';
    const text = format === 'json' || format === 'verbose_json';
    const res = await this.transport.send({
      method: 'POST',
      path: this.path,
      auth: 'bearer',
      form,
      accept: text ? 'application/json' : 'text/plain',
      signal: opts.signal,
    });
    const body2 = await new BinaryResponse(res, this.what).buffer();
    const str = body2.toString('utf8');
    if (!text) return str as TranscriptionResult<F>;
    let json: unknown;
    try {
      json = JSON.parse(str);
    } catch {
      throw new GatewayError(`The ${this.what} answer is not JSON: ${str.slice(0, 120)}`, { type: 'invalid_response' });
    }
    return parseResponse(format === 'verbose_json' ? VerboseSchema : z.looseObject({ text: z.string() }), json, `a ${this.what}`) as TranscriptionResult<F>;
  }
}

export class Audio {
  readonly speech: Speech;
  readonly transcriptions: AudioTextEndpoint;
  readonly translations: AudioTextEndpoint;
  constructor(transport: Transport) {
    this.speech = new Speech(transport);
    this.transcriptions = new AudioTextEndpoint(transport, '/v1/audio/transcriptions', 'transcription', true);
    this.translations = new AudioTextEndpoint(transport, '/v1/audio/translations', 'translation', false);
  }
}
