/**
 * The spec's limits on media requests, in one place for the client (which checks a request before
 * sending it), the commands and the language-model tools.
 */

/** Characters one speech request takes; longer text is split (the commands) or refused (the tool). */
export const MAX_SPEECH_INPUT = 4096;

/** Bytes of one audio upload for a transcription or translation. */
export const MAX_AUDIO_UPLOAD_BYTES = 25 * 1024 * 1024;

/** Suno's limits (characters), as its site and the gateways' docs state them. */
export const SUNO_LIMITS = { description: 500, lyrics: 5000, tags: 200, title: 80 } as const;

/** Midjourney's prompt limit (characters), as midjourney-proxy passes it on. */
export const MJ_PROMPT_LIMIT = 4000;
