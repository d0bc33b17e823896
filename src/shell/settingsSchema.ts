/**
 * The defaults and limits of every setting the extension reads, in one place. package.json
 * declares the same (a unit test holds the two together); the readers validate with these, so a
 * value out of range falls back to the default the Settings editor shows.
 */

interface NumberRule {
  default: number;
  minimum?: number;
  maximum?: number;
  /** Whole numbers only (a fraction is cut, as the readers need counts). */
  integer?: boolean;
}

export const NUMBER_SETTINGS = {
  'modelGateway.requestTimeoutSeconds': { default: 600, minimum: 5, maximum: 3600 },
  'modelGateway.streamIdleTimeoutSeconds': { default: 60, minimum: 1, maximum: 3600 },
  'modelGateway.lowBalanceWarningDollars': { default: 1, minimum: 0 },
  'modelGateway.chat.maxToolSteps': { default: 25, minimum: 1, maximum: 200, integer: true },
  'modelGateway.chat.maxCostPerTurnDollars': { default: 2, minimum: 0, maximum: 1000 },
  'modelGateway.chat.inlineDiffMaxLines': { default: 12, minimum: 0, maximum: 200, integer: true },
  'modelGateway.search.batchSize': { default: 64, minimum: 1, maximum: 2048, integer: true },
  'modelGateway.search.concurrency': { default: 4, minimum: 1, maximum: 16, integer: true },
  'modelGateway.search.maxFileKB': { default: 512, minimum: 1, maximum: 10240, integer: true },
  'modelGateway.search.candidates': { default: 30, minimum: 5, maximum: 200, integer: true },
  'modelGateway.assets.videoPollSeconds': { default: 15, minimum: 1, maximum: 300 },
  'modelGateway.assets.maxDownloadMegabytes': { default: 512, minimum: 1, maximum: 16384, integer: true },
  'modelGateway.usage.warnDaysLeft': { default: 7, minimum: 0, maximum: 365, integer: true },
  'modelGateway.lm.dailyCapDollars': { default: 5, minimum: 0, maximum: 10000 },
  'modelGateway.mcp.sampling.dailyCapDollars': { default: 1, minimum: 0, maximum: 10000 },
  'modelGateway.agent.commandTimeoutSeconds': { default: 600, minimum: 5, maximum: 86400 },
  'modelGateway.agent.maxParallelSubagents': { default: 3, minimum: 1, maximum: 8, integer: true },
  'modelGateway.agent.maxCostPerSessionDollars': { default: 2, minimum: 0, maximum: 1000 },
  'modelGateway.completions.maxPrefixTokens': { default: 1500, minimum: 50, maximum: 16000, integer: true },
  'modelGateway.completions.maxSuffixTokens': { default: 500, minimum: 0, maximum: 8000, integer: true },
  'modelGateway.completions.maxLines': { default: 12, minimum: 1, maximum: 200, integer: true },
  'modelGateway.completions.maxFileKB': { default: 1024, minimum: 1, maximum: 20480, integer: true },
  'modelGateway.completions.dailyCapDollars': { default: 1, minimum: 0, maximum: 10000 },
  'modelGateway.fallbackRateLimitWaitSeconds': { default: 0, minimum: 0, maximum: 600 },
  'modelGateway.fallbackFirstTokenSeconds': { default: 45, minimum: 0, maximum: 600 },
} satisfies Record<string, NumberRule>;
export type NumberSetting = keyof typeof NUMBER_SETTINGS;

export const STRING_SETTINGS = {
  'modelGateway.baseUrl': '',
  'modelGateway.userId': '',
  'modelGateway.defaultModels.chat': '',
  'modelGateway.defaultModels.embeddings': 'text-embedding-3-small',
  'modelGateway.defaultModels.rerank': '',
  'modelGateway.defaultModels.speech': 'tts-1',
  'modelGateway.defaultModels.transcription': 'whisper-1',
  'modelGateway.defaultModels.image': 'V_3',
  'modelGateway.defaultModels.video': 'sora-2',
  'modelGateway.defaultModels.completion': '',
  'modelGateway.chat.messagesFormatPattern': '^claude',
  'modelGateway.chat.promptCacheTtl': '5m',
  'modelGateway.assets.folder': 'generated',
  'modelGateway.search.teamStore': '',
  'modelGateway.scm.model': '',
  'modelGateway.nextEdits.model': '',
  'modelGateway.agent.subagentModel': '',
} satisfies Record<string, string>;
export type StringSetting = keyof typeof STRING_SETTINGS;

export const BOOLEAN_SETTINGS = {
  'modelGateway.chat.attachActiveEditor': true,
  'modelGateway.chat.findTools': true,
  'modelGateway.nextEdits.enabled': true,
  'modelGateway.usage.showTodayInStatusBar': true,
  'modelGateway.completions.enabled': true,
  'modelGateway.search.teamStoreReadOnly': false,
  'modelGateway.search.teamStoreSearch': false,
  'modelGateway.agent.sandbox.enabled': true,
  'modelGateway.agent.sandbox.runUnasked': true,
} satisfies Record<string, boolean>;
export type BooleanSetting = keyof typeof BOOLEAN_SETTINGS;

/** A number setting as read: the value when it is a number within the limits, else the default. */
export function numberSetting(key: NumberSetting, value: unknown): number {
  const rule: NumberRule = NUMBER_SETTINGS[key];
  if (typeof value !== 'number' || !Number.isFinite(value)) return rule.default;
  if (rule.minimum !== undefined && value < rule.minimum) return rule.default;
  if (rule.maximum !== undefined && value > rule.maximum) return rule.default;
  return rule.integer ? Math.floor(value) : value;
}

export function stringSetting(key: StringSetting, value: unknown): string {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : STRING_SETTINGS[key];
}

export function booleanSetting(key: BooleanSetting, value: unknown): boolean {
  return typeof value === 'boolean' ? value : BOOLEAN_SETTINGS[key];
}
