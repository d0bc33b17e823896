import { Account } from './resources/account';
import { Audio } from './resources/audio';
import { Chat } from './resources/chat';
import { TextCompletions } from './resources/completions';
import { Transport, type TransportOptions } from './core/transport';
import { Embeddings } from './resources/embeddings';
import { Imagegen } from './resources/imagegen';
import { Messages } from './resources/messages';
import { Models } from './resources/models';
import { Moderations } from './resources/moderations';
import { Rerank } from './resources/rerank';
import { Responses } from './resources/responses';
import { Gemini } from './resources/gemini';
import { Videos } from './resources/videos';
import { Suno } from './resources/suno';
import { Midjourney } from './resources/midjourney';

export interface GatewayClientOptions extends TransportOptions {
  /** Ask for a usage chunk at the end of chat streams (default true; some gateways reject it). */
  streamUsage?: boolean;
  /** Called when a gateway refuses `stream_options` (the stream is retried without it). */
  onStreamOptionsRefused?: (baseUrl: string) => void;
}

/**
 * One client for the whole gateway, shaped like the openai-node SDK: a resource per interface
 * over one transport (keep-alive connections, auth per interface, retries, typed errors).
 */
export class GatewayClient {
  readonly models: Models;
  readonly chat: Chat;
  /** `/v1/completions`: text completion and fill-in-the-middle (`prompt` + `suffix`). */
  readonly completions: TextCompletions;
  readonly messages: Messages;
  readonly responses: Responses;
  /** Gemini's own format (`/v1beta/models/{model}:generateContent`). */
  readonly gemini: Gemini;
  readonly embeddings: Embeddings;
  readonly rerank: Rerank;
  readonly moderations: Moderations;
  readonly audio: Audio;
  readonly videos: Videos;
  /** new-api's Suno task routes (`/suno/submit/music`, `/suno/fetch/{id}`). */
  readonly suno: Suno;
  /** new-api's Midjourney task routes (`/mj/submit/*`, `/mj/task/{id}/fetch`). */
  readonly midjourney: Midjourney;
  readonly imagegen: Imagegen;
  readonly account: Account;
  private readonly transport: Transport;

  constructor(options: GatewayClientOptions) {
    this.transport = new Transport(options);
    this.models = new Models(this.transport);
    this.chat = new Chat(this.transport, { streamUsage: options.streamUsage ?? true, onStreamOptionsRefused: options.onStreamOptionsRefused });
    this.completions = new TextCompletions(this.transport);
    this.messages = new Messages(this.transport);
    this.responses = new Responses(this.transport);
    this.gemini = new Gemini(this.transport);
    this.embeddings = new Embeddings(this.transport);
    this.rerank = new Rerank(this.transport);
    this.moderations = new Moderations(this.transport);
    this.audio = new Audio(this.transport);
    this.videos = new Videos(this.transport, (ms, signal) => this.transport.wait(ms, signal));
    this.suno = new Suno(this.transport, (ms, signal) => this.transport.wait(ms, signal));
    this.midjourney = new Midjourney(this.transport, (ms, signal) => this.transport.wait(ms, signal));
    this.imagegen = new Imagegen(this.transport);
    this.account = new Account(this.transport);
  }

  /** The base URL in use, normalised (no trailing `/v1` or `/`). */
  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  /** Closes pooled connections. */
  close(): Promise<void> {
    return this.transport.close();
  }
}
