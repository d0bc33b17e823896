/** The jobs a default model is set for (`modelGateway.defaultModels.<job>`). */
export const JOBS = ['chat', 'embeddings', 'rerank', 'speech', 'transcription', 'image', 'video', 'completion'] as const;
export type Job = (typeof JOBS)[number];
