// Types for the undici modules the transport loads directly (see undiciLite.ts).
declare module 'undici/lib/dispatcher/agent' {
  import { Agent } from 'undici';
  export = Agent;
}
declare module 'undici/lib/dispatcher/proxy-agent' {
  import { ProxyAgent } from 'undici';
  export = ProxyAgent;
}
declare module 'undici/lib/dispatcher/dispatcher' {
  import { Dispatcher } from 'undici';
  export = Dispatcher;
}
declare module 'undici/lib/api/api-request' {
  import type { Dispatcher } from 'undici';
  function request(this: Dispatcher, opts: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  export = request;
}
declare module 'undici/lib/api/api-connect' {
  function connect(this: unknown, opts: unknown, callback?: unknown): unknown;
  export = connect;
}
