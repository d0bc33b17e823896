/**
 * The parts of undici the transport uses: the connection-pooling Agent, the proxy agent, the
 * Dispatcher base and the `request` API, loaded from their own modules. The package's index loads
 * fetch, WebSocket, caching and more (about 540 KB of the bundle); these are about a half of it.
 */
import type { Dispatcher as DispatcherType } from 'undici';
import Agent from 'undici/lib/dispatcher/agent';
import ProxyAgent from 'undici/lib/dispatcher/proxy-agent';
import Dispatcher from 'undici/lib/dispatcher/dispatcher';
import apiRequest from 'undici/lib/api/api-request';
import apiConnect from 'undici/lib/api/api-connect';

// The proxy agent opens its tunnels with `dispatcher.connect(...)`, a method the package's index
// adds to every dispatcher; loading the modules directly, we add the one it needs.
(Dispatcher.prototype as { connect?: unknown }).connect ??= apiConnect;

export { Agent, Dispatcher, ProxyAgent };

/** `undici.request(url, options)` with an explicit dispatcher, as the package's index defines it. */
export function request(
  url: string,
  opts: Omit<DispatcherType.RequestOptions, 'origin' | 'path'> & { dispatcher: DispatcherType },
): Promise<DispatcherType.ResponseData> {
  const u = new URL(url);
  const { dispatcher, ...rest } = opts;
  return apiRequest.call(dispatcher, { ...rest, origin: u.origin, path: `${u.pathname}${u.search}`, method: opts.method ?? 'GET' });
}
