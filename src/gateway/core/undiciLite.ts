/**
 * The two parts of undici the transport uses: the connection-pooling Agent and the `request`
 * API, loaded from their own modules. The package's index loads fetch, WebSocket, caching and
 * more (about 540 KB of the bundle); these two are about 240 KB.
 */
import type { Dispatcher } from 'undici';
import Agent from 'undici/lib/dispatcher/agent';
import apiRequest from 'undici/lib/api/api-request';

export { Agent };

/** `undici.request(url, options)` with an explicit dispatcher, as the package's index defines it. */
export function request(url: string, opts: Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Dispatcher }): Promise<Dispatcher.ResponseData> {
  const u = new URL(url);
  const { dispatcher, ...rest } = opts;
  return apiRequest.call(dispatcher, { ...rest, origin: u.origin, path: `${u.pathname}${u.search}`, method: opts.method ?? 'GET' });
}
