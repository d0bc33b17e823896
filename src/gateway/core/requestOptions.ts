/** Options every resource method takes. */
export interface RequestOptions {
  signal?: AbortSignal;
  /**
   * How this request may be tried again. `statuses: false`: an error status (429, 503, 5xx) is not
   * sent again to the same model (the caller asks the next model of its chain instead); only a 429
   * whose wait is within `maxRetryAfterMs` is waited out. `maxRetryAfterMs` overrides the client's.
   */
  retry?: { statuses?: boolean; maxRetryAfterMs?: number };
}
