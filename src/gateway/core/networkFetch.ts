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
  const once = async (url: string | URL, init: RequestInit): Promise<Response> => {
    const sent = new Headers(init.headers);
    // A form (the OAuth token request) goes as text, typed as fetch types it.
    if (init.body instanceof URLSearchParams && !sent.has('content-type')) sent.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
    const body = init.body instanceof URLSearchParams ? init.body.toString() : init.body instanceof ArrayBuffer ? new Uint8Array(init.body) : init.body;
    if (body != null && typeof body !== 'string' && !(body instanceof Uint8Array)) throw new TypeError('this fetch sends text, forms or bytes only');
    const method = (init.method ?? 'GET').toUpperCase();
    const r = await request(String(url), {
      method,
      headers: Object.fromEntries(sent.entries()),
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
  };
  return {
    // Redirects are followed as fetch follows them (unless asked not to): 303, and 301/302 after a
    // POST, go on as a GET without the body; 307/308 keep both.
    fetch: async (url, init = {}) => {
      let target = new URL(String(url));
      let step = { ...init };
      for (let hops = 0; ; hops++) {
        const res = await once(target, step);
        const location = res.headers.get('location');
        if (init.redirect === 'manual' || !REDIRECTS.has(res.status) || !location) return res;
        if (init.redirect === 'error' || hops >= MAX_REDIRECTS) {
          await res.body?.cancel();
          throw new TypeError(`too many redirects (or none allowed) at ${target.origin}`);
        }
        await res.body?.cancel();
        const method = (step.method ?? 'GET').toUpperCase();
        const asGet = res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST');
        const next = new URL(location, target);
        // Credentials never follow a redirect to another origin.
        const headers = new Headers(step.headers);
        if (next.origin !== target.origin) headers.delete('authorization');
        step = asGet ? { ...step, method: 'GET', body: undefined, headers } : { ...step, headers };
        target = next;
      }
    },
    close: () => dispatcher.close(),
  };
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
