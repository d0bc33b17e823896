import * as vscode from 'vscode';
import type * as Gateway from '../gateway';
import { modelOverride, readSettings, type GatewaySettings } from './config';
import type { FormatFacts } from '../common/conversation';
import { Credentials } from './credentials';
import { Log } from './log';
import { affectsNetwork, readNetwork, type NetworkChoice } from './network';
import { credentialDecision, gatewayOrigin, withheldReason, type CredentialKind } from './origins';
import { Prompts } from './prompts';
import { Prices } from './prices';
import { shareTranslations } from './language';
import type { l10nJsonFormat } from '@vscode/l10n';
import { counted } from './listeners';

export type GatewayModule = typeof Gateway & { useTranslations(contents: l10nJsonFormat): void };

let gatewayModule: GatewayModule | undefined;

/** Base URLs of gateways that answered 404 for `/v1/responses` (kept in global state). */
const NO_RESPONSES_ROUTE = 'modelGateway.noResponsesRoute';

/** Base URLs of gateways that answered 404 for Gemini's `/v1beta` (kept in global state). */
const NO_GEMINI_ROUTE = 'modelGateway.noGeminiRoute';

/** Base URLs of gateways that answered 404 for `/v1/responses/compact` (kept in global state). */
const NO_COMPACT_ROUTE = 'modelGateway.noCompactRoute';

/** Base URLs of gateways that refused `stream_options` (kept in global state). */
const STREAM_OPTIONS_REFUSED = 'modelGateway.refusesStreamOptions';

/** The gateway client bundle, required on first use (a separate file beside extension.js). */
export function loadGateway(): GatewayModule {
  if (!gatewayModule) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    gatewayModule = require('./gateway.js') as GatewayModule;
    shareTranslations((contents) => gatewayModule?.useTranslations(contents));
  }
  return gatewayModule;
}

/** The settings in force, read and checked on each call. */
export interface SettingsSource {
  settings(): GatewaySettings;
}

/** The gateway client for the settings and credentials in force, and the events around it. */
export interface GatewayConnection {
  client(): Gateway.GatewayClient;
  isConfigured(): boolean;
  /** The proxy and certificates in use, with notes for the status bar (read when the client is built). */
  network(): NetworkChoice;
  /** Tells the balance views that something was spent. */
  notifySpend(): void;
  readonly onDidChangeConnection: vscode.Event<void>;
  readonly onDidSpend: vscode.Event<void>;
  /** Fired before the client waits to try a request again (a rate limit, a busy gateway). */
  readonly onDidRetry: vscode.Event<Gateway.RetryInfo>;
}

/** The credentials, and whether the gateway in use may have them. */
export interface CredentialSource {
  readonly credentials: Credentials;
  withheldCredentials(): CredentialKind[];
  gatewayOrigin(): string | undefined;
}

/** Questions to the person (modal confirmations, secret entry). */
export interface PromptSource {
  readonly prompts: Prompts;
}

/** Model prices: the gateway's and the user's own; with them, the wire formats the gateway lists per model. */
export interface PriceSource {
  readonly prices: Prices;
  formatFacts(model: string): FormatFacts;
  formatFactsReady(model: string): Promise<FormatFacts>;
  noResponsesRoute(model: string): void;
  noGeminiRoute(model: string): void;
  noCompactRoute(model: string): void;
}

/** The redacted log, and the notices shown (kept for the tests and support). */
export interface LogSource {
  readonly log: Log;
  recordNotice(level: 'info' | 'warning' | 'error', message: string): void;
}

/** What most features ask for, by name: calling the gateway and reporting (`GatewayFeature`), plus questions to the person, plus the credentials or the prices. */
export type GatewayFeature = SettingsSource & GatewayConnection & LogSource;
export type InteractiveFeature = GatewayFeature & PromptSource;
export type CredentialFeature = InteractiveFeature & CredentialSource;
export type PricedFeature = InteractiveFeature & PriceSource;

/**
 * What every feature shares: settings, credentials, the log, and one gateway client rebuilt
 * whenever the settings or credentials change.
 */
export class Services implements SettingsSource, GatewayConnection, CredentialSource, PromptSource, PriceSource, LogSource, vscode.Disposable {
  readonly credentials: Credentials;
  readonly log: Log;
  readonly prompts = new Prompts();
  /** Model prices: the gateway's (read once an hour) and the user's own. */
  readonly prices = new Prices(this);
  private readonly spent = new vscode.EventEmitter<void>();
  /** Fired after an action that costs money, so balances refresh. */
  readonly onDidSpend = counted('services.onDidSpend', this.spent.event);
  private readonly retried = new vscode.EventEmitter<Gateway.RetryInfo>();
  /** Fired before the client waits to try a request again (a rate limit, a busy gateway). */
  readonly onDidRetry = counted('services.onDidRetry', this.retried.event);
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fired when settings or credentials that affect the connection change. */
  readonly onDidChangeConnection = counted('services.onDidChangeConnection', this.changed.event);
  private cachedClient: { signature: string; client: Gateway.GatewayClient } | undefined;
  /** Read again after any settings change (files and the OS store are read once per change). */
  private networkChoice: NetworkChoice | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(readonly context: vscode.ExtensionContext) {
    this.credentials = new Credentials(context.secrets);
    this.log = new Log();
    this.disposables.push(
      this.credentials,
      this.log,
      this.spent,
      this.retried,
      this.changed,
      this.credentials.onDidChange(() => this.connectionChanged()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('modelGateway') || affectsNetwork(e)) this.connectionChanged();
      }),
    );
  }

  settings(): GatewaySettings {
    return readSettings();
  }

  private connectionChanged(): void {
    this.networkChoice = undefined;
    this.prices.reset();
    void this.updateContextKeys();
    this.changed.fire();
  }

  async updateContextKeys(): Promise<void> {
    const s = this.settings();
    await vscode.commands.executeCommand('setContext', 'modelGateway.hasBaseUrl', !!s.baseUrl);
    await vscode.commands.executeCommand('setContext', 'modelGateway.hasApiKey', !!this.credentials.getApiKey());
    await vscode.commands.executeCommand('setContext', 'modelGateway.hasAccessToken', !!this.credentials.getAccessToken());
  }

  /** Whether a base URL and an API key are both set. */
  isConfigured(): boolean {
    return !!this.settings().baseUrl && !!this.credentials.getApiKey();
  }

  /** The origin of the gateway URL in use, if it is a valid http(s) URL. */
  gatewayOrigin(): string | undefined {
    return gatewayOrigin(this.settings().baseUrl);
  }

  /** Each stored credential and what may be done with it at `origin` (`credentialDecision`). */
  private credentialDecisions(origin: string): { kind: CredentialKind; value: string; bound?: string; decision: ReturnType<typeof credentialDecision> }[] {
    return (['apiKey', 'accessToken'] as const).flatMap((kind) => {
      const value = kind === 'apiKey' ? this.credentials.getApiKey() : this.credentials.getAccessToken();
      if (!value) return [];
      const bound = this.credentials.boundOrigin(kind);
      return [{ kind, value, bound, decision: credentialDecision(bound, origin) }];
    });
  }

  /**
   * The credentials that may go to the gateway URL in use: each only to the origin it was entered
   * or confirmed for. One never bound yet is bound here to the user's URL (https or loopback);
   * the others are withheld, with the reason the client gives when a call needs them.
   */
  private credentialsForOrigin(origin: string | undefined): {
    apiKey?: string;
    systemAccessToken?: string;
    withheld: Partial<Record<'apiKey' | 'systemAccessToken', string>>;
  } {
    const out: { apiKey?: string; systemAccessToken?: string; withheld: Partial<Record<'apiKey' | 'systemAccessToken', string>> } = { withheld: {} };
    if (!origin) return out;
    const toBind: CredentialKind[] = [];
    for (const c of this.credentialDecisions(origin)) {
      const field = c.kind === 'apiKey' ? 'apiKey' : 'systemAccessToken';
      if (c.decision === 'withhold') {
        out.withheld[field] = withheldReason(c.kind, c.bound, origin);
        continue;
      }
      if (c.decision === 'bind') toBind.push(c.kind);
      out[field] = c.value;
    }
    if (toBind.length) {
      this.log.info(`${toBind.join(' and ')} bound to ${origin} (the gateway in the user settings)`);
      void this.credentials.bind(toBind, origin);
    }
    return out;
  }

  /** Credentials held but not sent to the gateway in use (another origin, or plain http), for the UI. */
  withheldCredentials(): CredentialKind[] {
    const origin = this.gatewayOrigin();
    return origin
      ? this.credentialDecisions(origin)
          .filter((c) => c.decision === 'withhold')
          .map((c) => c.kind)
      : [];
  }

  /** The client for the current settings and credentials (built once per combination). */
  client(): Gateway.GatewayClient {
    const s = this.settings();
    const { apiKey, systemAccessToken, withheld } = this.credentialsForOrigin(gatewayOrigin(s.baseUrl));
    // Kept in memory only; compares the full values so any change of credential rebuilds the client.
    const userId = this.credentials.getAccountUserId() ?? s.userId;
    const refusing = this.context.globalState.get<string[]>(STREAM_OPTIONS_REFUSED) ?? [];
    const gw = loadGateway();
    const network = this.network();
    const signature = JSON.stringify([
      s.baseUrl,
      userId,
      s.timeoutMs,
      s.streamIdleTimeoutMs,
      s.extraHeaders,
      apiKey ?? null,
      systemAccessToken ?? null,
      withheld,
      network.signature,
    ]);
    if (this.cachedClient?.signature === signature) return this.cachedClient.client;
    if (!s.baseUrl)
      throw new gw.MissingCredentialError(vscode.l10n.t('No gateway URL is set. Run "Model Gateway: Set Gateway URL".'), {
        type: 'configuration_error',
        code: 'base_url',
      });
    // The old client is closed and forgotten even when the new settings cannot make a client:
    // a cached closed client would fail every later call once the settings are back.
    void this.cachedClient?.client.close();
    this.cachedClient = undefined;
    const client = new gw.GatewayClient({
      baseUrl: s.baseUrl,
      apiKey,
      systemAccessToken,
      withheld,
      userId: userId || undefined,
      timeoutMs: s.timeoutMs,
      streamIdleTimeoutMs: s.streamIdleTimeoutMs,
      headers: s.extraHeaders,
      network: network.options,
      // A gateway that refused stream_options once is not asked again, across sessions.
      streamUsage: !refusing.includes(gw.normalizeBaseUrl(s.baseUrl)),
      onStreamOptionsRefused: (url) => {
        this.log.warn(`${url} refused stream_options: streams are sent without it from now on (usage is estimated when missing)`);
        void this.context.globalState.update(STREAM_OPTIONS_REFUSED, [...new Set([...refusing, url])]);
      },
      onRetry: (r) => {
        this.log.warn(`retrying ${r.method} ${r.path} in ${Math.round(r.waitMs)} ms (attempt ${r.attempt}): ${r.reason}`);
        this.retried.fire(r);
      },
    });
    this.cachedClient = { signature, client };
    return client;
  }

  /** What decides a model's wire format beyond the chat's own choice (`resolveFormat`). */
  formatFacts(model: string): FormatFacts {
    const s = this.settings();
    const base = this.normalizedBaseUrl();
    return {
      override: modelOverride(s.modelOverrides, model).api,
      endpoints: this.prices.latest?.endpoints(model),
      noResponsesRoute: (this.context.globalState.get<string[]>(NO_RESPONSES_ROUTE) ?? []).includes(base),
      noGeminiRoute: (this.context.globalState.get<string[]>(NO_GEMINI_ROUTE) ?? []).includes(base),
      noCompactRoute: (this.context.globalState.get<string[]>(NO_COMPACT_ROUTE) ?? []).includes(base),
    };
  }

  /** The gateway URL as the client uses it (`normalizeBaseUrl`), or '' when it is not a valid URL. */
  private normalizedBaseUrl(): string {
    try {
      return loadGateway().normalizeBaseUrl(this.settings().baseUrl);
    } catch {
      return '';
    }
  }

  /** `formatFacts` once the gateway's endpoint list is read (waits for it as long as `Prices.bookWithin`; read once an hour). */
  async formatFactsReady(model: string): Promise<FormatFacts> {
    await this.prices.bookWithin();
    return this.formatFacts(model);
  }

  /** The gateway in use answered 404 for Gemini's `/v1beta`: its Gemini models go by chat completions from now on. */
  noGeminiRoute(model: string): void {
    const base = this.normalizedBaseUrl();
    const known = this.context.globalState.get<string[]>(NO_GEMINI_ROUTE) ?? [];
    if (!known.includes(base)) void this.context.globalState.update(NO_GEMINI_ROUTE, [...known, base]);
    const message = vscode.l10n.t(
      "This gateway has no /v1beta (Gemini's own format, HTTP 404): {0} goes by chat completions instead, now and in later chats.",
      model,
    );
    this.log.warn(message);
    this.recordNotice('warning', message);
  }

  /** The gateway in use answered 404 for `/v1/responses/compact`: condensing asks the model for a summary from now on (said in the log only: nothing is lost). */
  noCompactRoute(model: string): void {
    const base = this.normalizedBaseUrl();
    const known = this.context.globalState.get<string[]>(NO_COMPACT_ROUTE) ?? [];
    if (!known.includes(base)) void this.context.globalState.update(NO_COMPACT_ROUTE, [...known, base]);
    this.log.info(`This gateway has no /v1/responses/compact (HTTP 404): ${model}'s conversations are condensed by a summary the model writes, now and later.`);
  }

  /** The gateway in use answered 404 for `/v1/responses`: its models fall back to chat completions from now on. */
  noResponsesRoute(model: string): void {
    const base = this.normalizedBaseUrl();
    const known = this.context.globalState.get<string[]>(NO_RESPONSES_ROUTE) ?? [];
    if (!known.includes(base)) void this.context.globalState.update(NO_RESPONSES_ROUTE, [...known, base]);
    const message = vscode.l10n.t(
      'This gateway has no /v1/responses (HTTP 404): {0} goes by chat completions instead, now and in later chats. Set modelGateway.modelOverrides["{0}"].api to choose another format.',
      model,
    );
    this.log.warn(message);
    this.recordNotice('warning', message);
    void vscode.window.showWarningMessage(message);
  }

  network(): NetworkChoice {
    this.networkChoice ??= readNetwork(loadGateway());
    return this.networkChoice;
  }

  /** The last messages shown to the person (newest last), so tests can read what the UI said. */
  readonly notices: { level: 'info' | 'warning' | 'error'; message: string }[] = [];

  recordNotice(level: 'info' | 'warning' | 'error', message: string): void {
    this.notices.push({ level, message });
    if (this.notices.length > 50) this.notices.shift();
  }

  notifySpend(): void {
    this.spent.fire();
  }

  dispose(): void {
    void this.cachedClient?.client.close();
    for (const d of this.disposables) d.dispose();
  }
}
