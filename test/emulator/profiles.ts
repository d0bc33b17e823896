/**
 * The real servers the emulator stands for. Each profile follows its server's source where the
 * spec is silent (read from songquanpeng/one-api and QuantumNous/new-api; see the README):
 * paging, envelopes, masking, what creation returns, status updates, user headers, routes.
 */
export const SERVER_PROFILES = ['new-api', 'one-api'] as const;
export type ServerProfile = (typeof SERVER_PROFILES)[number];

export interface ProfileRules {
  /** The brand in relay error types (`new_api_error`, `one_api_error`). */
  errorType: string;
  /** First page number of `p`: one-api counts from 0; new-api from 1 (0 is read as 1). */
  firstPage: 0 | 1;
  /** Page size: one-api has a fixed one; new-api reads `page_size` (also `ps`, `size`). */
  pageSize: 'fixed' | 'query';
  /** `data` of a list: a bare array (one-api) or `{page, page_size, total, items}` (new-api). */
  listShape: 'array' | 'paged';
  /** Keys in lists, details and update answers: one-api shows them whole, new-api masked. */
  maskKeys: boolean;
  /** Creation answers with the whole record (one-api) or a bare success (new-api). */
  createReturns: 'record' | 'nothing';
  /** `POST /api/token/{id}/key` reveals a key (new-api only). */
  revealRoute: boolean;
  /** Account calls need `New-Api-User: <user id>` (2025 new-api). */
  requireNewApiUser: boolean;
  /** The account's own model list route. */
  userModelsPath: '/api/user/available_models' | '/api/user/models';
  /** Key search: one-api matches a name prefix, new-api the exact name (and pages it). */
  searchMatch: 'prefix' | 'exact';
  /** HTTP status of a `success:false` for an invalid access token. */
  invalidTokenStatus: 200 | 401;
}

export const PROFILE_RULES: Record<ServerProfile, ProfileRules> = {
  'new-api': {
    errorType: 'new_api_error',
    firstPage: 1,
    pageSize: 'query',
    listShape: 'paged',
    maskKeys: true,
    createReturns: 'nothing',
    revealRoute: true,
    requireNewApiUser: true,
    userModelsPath: '/api/user/models',
    searchMatch: 'exact',
    invalidTokenStatus: 401,
  },
  'one-api': {
    errorType: 'one_api_error',
    firstPage: 0,
    pageSize: 'fixed',
    listShape: 'array',
    maskKeys: false,
    createReturns: 'record',
    revealRoute: false,
    requireNewApiUser: false,
    userModelsPath: '/api/user/available_models',
    searchMatch: 'prefix',
    invalidTokenStatus: 200,
  },
};

/** The page size both servers use when none is asked for (one-api: always). */
export const DEFAULT_PAGE_SIZE = 10;

export function isProfile(v: unknown): v is ServerProfile {
  return typeof v === 'string' && (SERVER_PROFILES as readonly string[]).includes(v);
}

/** The profile named by `MODEL_GATEWAY_EMULATOR_PROFILE` (tests, `npm start`), new-api by default. */
export function profileFromEnv(env: NodeJS.ProcessEnv = process.env): ServerProfile {
  const v = env.MODEL_GATEWAY_EMULATOR_PROFILE?.trim();
  if (!v) return 'new-api';
  if (!isProfile(v)) throw new Error(`MODEL_GATEWAY_EMULATOR_PROFILE must be one of ${SERVER_PROFILES.join(', ')}, not "${v}"`);
  return v;
}
