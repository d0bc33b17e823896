/**
 * A WHATWG `fetch` that goes the gateway client's way (the same proxy, the same certificates),
 * for other HTTP clients in the extension host: the MCP SDK's streamable HTTP and SSE transports.
 * VS Code patches Node's http/https for extensions, not `fetch`, so without this an MCP server
 * behind the company proxy or signed by its CA is unreachable while the gateway works.
 */
import { Readable } from 'node:stream';
import { NetworkDispatcher, type NetworkOptions } from './network';
import { request } from './undiciLite';

export interface NetworkFetch {
  fetch: (url: string | URL, init?: RequestInit) => Promise<Response>;
  close: () => Promise<void>;
}

/** Statuses whose responses have no body (a `Response` refuses one). */
const BODILESS = new Set([101, 204, 205, 304]);

export function networkFetch(options: NetworkOptions): NetworkFetch {
  const dispatcher = new NetworkDispatcher(options, { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 300_000 });
  return {
    fetch: async (url, init = {}) => {
      const body = init.body;
      if (body != null && typeof body !== 'string' && !(body instanceof Uint8Array)) throw new TypeError('this fetch sends text or bytes only');
      const method = (init.method ?? 'GET').toUpperCase();
      const r = await request(String(url), {
        method: method,
        headers: Object.fromEntries(new Headers(init.headers).entries()),
        ...(body != null ? { body } : {}),
        ...(init.signal ? { signal: init.signal } : {}),
        dispatcher,
      });
      const headers = new Headers();
      for (const [k, v] of Object.entries(r.headers)) {
        if (Array.isArray(v)) for (const one of v) headers.append(k, one);
        else if (v !== undefined) headers.set(k, v);
      }
      if (BODILESS.has(r.statusCode) || method === 'HEAD') {
        r.body.resume();
        return new Response(null, { status: r.statusCode === 101 ? 200 : r.statusCode, headers });
      }
      return new Response(Readable.toWeb(r.body) as ReadableStream<Uint8Array>, { status: r.statusCode, headers });
    },
    close: () => dispatcher.close(),
  };
}
