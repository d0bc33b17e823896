import { Chat } from './chat';
import { Transport, type TransportOptions } from './core/transport';
import { Messages } from './messages';
import { Models } from './models';

export interface GatewayClientOptions extends TransportOptions {
  /** Ask for a usage chunk at the end of chat streams (default true; some gateways reject it). */
  streamUsage?: boolean;
}

/**
 * One client for the whole gateway, shaped like the openai-node SDK: a resource per interface
 * over one transport (keep-alive connections, auth per interface, retries, typed errors).
 */
export class GatewayClient {
  readonly models: Models;
  readonly chat: Chat;
  readonly messages: Messages;
  private readonly transport: Transport;

  constructor(options: GatewayClientOptions) {
    this.transport = new Transport(options);
    this.models = new Models(this.transport);
    this.chat = new Chat(this.transport, { streamUsage: options.streamUsage ?? true });
    this.messages = new Messages(this.transport);
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
