/** The media tools as the model sees them (the runner is `host/mediaTools.ts`). */
import { MAX_SPEECH_INPUT } from '../../common/mediaLimits';
import type { ToolDefinition } from '../../tools/workspaceTools';

export const ASPECTS = ['1x1', '16x9', '9x16', '4x3', '3x4', '3x2', '2x3'] as const;

export const MEDIA_TOOL_DEFINITIONS: ToolDefinition[] = [
  {
    name: 'generate_image',
    description:
      'Generates one image from a text prompt and saves it as a PNG into the workspace (the assets folder). Paid: the person sees the price and approves unless paid media run unasked.',
    kind: 'write',
    parameters: {
      type: 'object',
      properties: {
        prompt: { type: 'string', description: 'What the image shows' },
        aspect_ratio: { type: 'string', enum: [...ASPECTS], description: 'Default 1x1' },
      },
      required: ['prompt'],
    },
  },
  {
    name: 'text_to_speech',
    description: `Speaks a text (at most ${MAX_SPEECH_INPUT} characters) and saves the audio as an MP3 into the workspace (the assets folder). Paid.`,
    kind: 'write',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string' }, voice: { type: 'string', description: 'A voice of the speech model (default: its first)' } },
      required: ['text'],
    },
  },
  {
    name: 'transcribe_audio',
    description: 'Transcribes an audio file of the workspace (workspace-relative path) and returns the text. Paid by the length of the audio.',
    kind: 'write',
    parameters: { type: 'object', properties: { path: { type: 'string', description: 'Workspace-relative path of the audio file' } }, required: ['path'] },
  },
  {
    name: 'generate_music',
    description:
      'Starts a song (Suno, where the gateway offers it): from a description, or from lyrics with a style and a title. Two clips are saved as MP3s into the assets folder in about a minute; this returns at once with the job. Paid per song.',
    kind: 'write',
    parameters: {
      type: 'object',
      properties: {
        description: { type: 'string', description: 'What the song is about, its mood and genre (Suno writes the lyrics). Give this or lyrics.' },
        lyrics: { type: 'string', description: 'The lyrics, [Verse]/[Chorus] marking the parts' },
        style: { type: 'string', description: 'With lyrics: the style (genre, instruments, voice)' },
        title: { type: 'string' },
        instrumental: { type: 'boolean', description: 'No vocals' },
      },
      required: [],
    },
  },
  {
    name: 'midjourney_imagine',
    description:
      'Starts a Midjourney grid of four images from a prompt (where the gateway offers Midjourney). The grid is saved as a PNG into the assets folder in about a minute; the person can then upscale or vary one. Returns at once with the job. Paid per grid.',
    kind: 'write',
    parameters: {
      type: 'object',
      properties: { prompt: { type: 'string', description: 'The prompt; Midjourney parameters such as --ar 16:9 at the end' } },
      required: ['prompt'],
    },
  },
  {
    name: 'moderate_text',
    description: "Checks a text with the gateway's moderation model and returns the flagged categories, if any.",
    kind: 'write',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
];
