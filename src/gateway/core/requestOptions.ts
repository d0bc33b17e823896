/** Options every resource method takes. */
export interface RequestOptions {
  signal?: AbortSignal;
}
