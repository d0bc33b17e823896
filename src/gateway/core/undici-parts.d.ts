// Types for the two undici modules the transport loads directly (see undiciLite.ts).
declare module 'undici/lib/dispatcher/agent' {
  import { Agent } from 'undici';
  export = Agent;
}
declare module 'undici/lib/api/api-request' {
  import type { Dispatcher } from 'undici';
  function request(this: Dispatcher, opts: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  export = request;
}
