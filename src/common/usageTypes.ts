/** The usage resource's records (no imports: the Usage view's bundle reads them too). */

/** One billed call from the consume log. */
export interface UsageLogEntry {
  /** Unix seconds. */
  at: number;
  model: string;
  /** The API key's name (the log keeps names, not keys). */
  keyName: string;
  quota: number;
  dollars: number;
  promptTokens: number;
  completionTokens: number;
  /** Cache reads and writes (new-api records them; one-api does not: 0). */
  cacheRead: number;
  cacheWrite: number;
  stream: boolean;
}

/** Calls, quota and tokens of one model in one time bucket. */
export interface UsageBucket {
  /** Unix seconds at the start of the bucket (an hour on new-api, a UTC day on one-api). */
  at: number;
  model: string;
  requests: number;
  quota: number;
  dollars: number;
  tokens: number;
}

export interface UsageLogs {
  /** Newest first. */
  items: UsageLogEntry[];
  /** False when the period holds more calls than were read (`maxRows`). */
  complete: boolean;
  /** How many calls the period holds, when the server says (new-api). */
  total?: number;
}

/** A model's price as the gateway bills it, in dollars; `unknown` when it has none configured. */
export interface ModelPrice {
  model: string;
  kind: 'tokens' | 'request';
  inputPerMTok?: number;
  outputPerMTok?: number;
  cacheReadPerMTok?: number;
  cacheWritePerMTok?: number;
  perRequest?: number;
  unknown: boolean;
  /** new-api's `supported_endpoint_types`: the wire formats the gateway serves the model in. */
  endpoints?: string[];
}

/** The key's own figures from the billing routes (API key only). */
export interface KeyBilling {
  unlimited: boolean;
  /** What the key was given (remaining + used); undefined when unlimited. */
  limitDollars?: number;
  usedDollars: number;
  remainingDollars?: number;
  /** Unix seconds; undefined for never. */
  accessUntil?: number;
}

export interface Period {
  /** Unix seconds, inclusive. */
  start: number;
  end: number;
}
