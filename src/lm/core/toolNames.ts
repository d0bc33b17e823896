/** The tools as package.json declares them (`languageModelTools`); a module of its own so tests can import it. */
export const LM_TOOL_NAMES = [
  'modelGateway_semanticSearch',
  'modelGateway_generateImage',
  'modelGateway_speak',
  'modelGateway_transcribe',
  'modelGateway_moderate',
  'modelGateway_balance',
] as const;
export type LmToolName = (typeof LM_TOOL_NAMES)[number];
