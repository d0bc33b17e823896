/** Models the emulator serves. Ids are case-sensitive, as on a real gateway. */
export interface EmulatedModel {
  id: string;
  kind: 'chat';
  ownedBy: string;
  /** Quota units per token (input; output costs 4 times this). */
  ratio: number;
  /** Smallest prefix, in tokens, that the prompt cache will store for this model. */
  cacheMinTokens: number;
}

export const MODELS: EmulatedModel[] = [
  { id: 'gpt-4o-mini', kind: 'chat', ownedBy: 'emulator', ratio: 0.15, cacheMinTokens: 1024 },
  { id: 'gpt-4o', kind: 'chat', ownedBy: 'emulator', ratio: 2.5, cacheMinTokens: 1024 },
  { id: 'claude-sonnet-emu', kind: 'chat', ownedBy: 'emulator', ratio: 3, cacheMinTokens: 1024 },
  // The smallest model series needs a 2,048-token prefix before anything is cached.
  { id: 'claude-haiku-emu', kind: 'chat', ownedBy: 'emulator', ratio: 1, cacheMinTokens: 2048 },
];

export function findModel(id: unknown): EmulatedModel | undefined {
  return typeof id === 'string' ? MODELS.find((m) => m.id === id) : undefined;
}
