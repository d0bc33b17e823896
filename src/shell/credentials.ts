import * as vscode from 'vscode';
import { registerSecret } from './redact';
import * as z from 'zod/mini';
import { gatewayOrigin, type CredentialKind } from './origins';
import { counted } from './listeners';

const API_KEY = 'modelGateway.apiKey';
const ACCESS_TOKEN = 'modelGateway.accessToken';
/** new-api's `New-Api-User`: the account id that goes with the access token, kept beside it. */
const ACCOUNT_USER_ID = 'modelGateway.accountUserId';
/** The origin each credential was entered for (or confirmed for): it is sent nowhere else. */
const ORIGINS = 'modelGateway.credentialOrigins';
const OriginRecord = z.catch(z.object({ apiKey: z.optional(z.string()), accessToken: z.optional(z.string()) }), {});
type OriginRecord = z.infer<typeof OriginRecord>;

export type CredentialSource = 'secret-storage' | 'environment' | 'none';

/**
 * The API key and the system access token. They live in SecretStorage only (never settings,
 * logs or the webview); the environment variables are a read-only fallback for CI, containers
 * and the demo.
 */
export class Credentials implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = counted('credentials.onDidChange', this.changed.event);
  private apiKey: string | undefined;
  private accessToken: string | undefined;
  private accountUserId: string | undefined;
  private origins: OriginRecord = {};
  private readonly subscription: vscode.Disposable;
  /**
   * Reads and writes of the stored values, one after another: a read begun before a write (after
   * another window's change) would otherwise finish after it and put the old values back.
   */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly secrets: vscode.SecretStorage) {
    this.subscription = secrets.onDidChange(async (e) => {
      if (e.key === API_KEY || e.key === ACCESS_TOKEN || e.key === ACCOUNT_USER_ID || e.key === ORIGINS) {
        await this.load();
        this.changed.fire();
      }
    });
  }

  load(): Promise<void> {
    return this.serially(() => this.read());
  }

  private serially<T>(step: () => Promise<T>): Promise<T> {
    const next = this.queue.then(step, step);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async read(): Promise<void> {
    this.apiKey = (await this.secrets.get(API_KEY)) || undefined;
    this.accessToken = (await this.secrets.get(ACCESS_TOKEN)) || undefined;
    this.accountUserId = (await this.secrets.get(ACCOUNT_USER_ID)) || undefined;
    this.origins = parseOrigins(await this.secrets.get(ORIGINS));
    for (const value of this.values()) registerSecret(value);
  }

  /**
   * The origin a credential belongs to: the one recorded when it was entered or confirmed; for a
   * credential from the environment, the origin of `MODEL_GATEWAY_BASE_URL` (set beside it).
   */
  boundOrigin(kind: CredentialKind): string | undefined {
    const source = kind === 'apiKey' ? this.apiKeySource() : this.accessTokenSource();
    if (source === 'environment') {
      const envOrigin = gatewayOrigin(process.env.MODEL_GATEWAY_BASE_URL ?? '');
      if (envOrigin) return envOrigin;
    }
    return this.origins[kind];
  }

  /** Records that these credentials belong to `origin` (entered there, or confirmed by the person). */
  bind(kinds: readonly CredentialKind[], origin: string): Promise<void> {
    return this.serially(async () => {
      const next = { ...this.origins };
      for (const k of kinds) next[k] = origin;
      await this.storeOrigins(next);
      this.changed.fire();
    });
  }

  private async storeOrigins(next: OriginRecord): Promise<void> {
    // An unchanged record is not written again (each write is a secret-storage change event).
    if (JSON.stringify(next) === JSON.stringify(this.origins)) return;
    this.origins = next;
    if (next.apiKey || next.accessToken) await this.secrets.store(ORIGINS, JSON.stringify(next));
    else await this.secrets.delete(ORIGINS);
  }

  /** The account user id stored with the access token (new-api's `New-Api-User`), if any. */
  getAccountUserId(): string | undefined {
    return this.accountUserId;
  }

  /** Stores the account user id with the access token; empty removes it. */
  setAccountUserId(value: string): Promise<void> {
    return this.serially(async () => {
      const id = value.trim();
      if (id && !/^\d+$/.test(id)) throw new Error('The account user id is a whole number (the ID in the gateway console).');
      if (id) await this.secrets.store(ACCOUNT_USER_ID, id);
      else await this.secrets.delete(ACCOUNT_USER_ID);
      this.accountUserId = id || undefined;
      this.changed.fire();
    });
  }

  getApiKey(): string | undefined {
    return this.apiKey ?? (process.env.MODEL_GATEWAY_API_KEY?.trim() || undefined);
  }

  getAccessToken(): string | undefined {
    return this.accessToken ?? (process.env.MODEL_GATEWAY_ACCESS_TOKEN?.trim() || undefined);
  }

  apiKeySource(): CredentialSource {
    return this.apiKey ? 'secret-storage' : process.env.MODEL_GATEWAY_API_KEY?.trim() ? 'environment' : 'none';
  }

  accessTokenSource(): CredentialSource {
    return this.accessToken ? 'secret-storage' : process.env.MODEL_GATEWAY_ACCESS_TOKEN?.trim() ? 'environment' : 'none';
  }

  /** Every secret value in use, for redaction. */
  values(): string[] {
    return [this.getApiKey(), this.getAccessToken()].filter((v): v is string => !!v && v.length >= 4);
  }

  /** A new API key, entered for `origin` (undefined: no gateway URL yet, bound to the first one used). */
  setApiKey(value: string, origin: string | undefined): Promise<void> {
    return this.serially(async () => {
      await this.secrets.store(API_KEY, value.trim());
      this.apiKey = value.trim();
      registerSecret(this.apiKey);
      await this.storeOrigins({ ...this.origins, apiKey: origin });
      this.changed.fire();
    });
  }

  /** A new access token for `origin`; the user id of the previous one goes with it unless kept on purpose. */
  setAccessToken(value: string, origin: string | undefined, options: { keepUserId?: boolean } = {}): Promise<void> {
    return this.serially(async () => {
      await this.secrets.store(ACCESS_TOKEN, value.trim());
      this.accessToken = value.trim();
      registerSecret(this.accessToken);
      await this.storeOrigins({ ...this.origins, accessToken: origin });
      if (!options.keepUserId && this.accountUserId) {
        await this.secrets.delete(ACCOUNT_USER_ID);
        this.accountUserId = undefined;
      }
      this.changed.fire();
    });
  }

  clear(): Promise<void> {
    return this.serially(async () => {
      await this.secrets.delete(API_KEY);
      await this.secrets.delete(ACCESS_TOKEN);
      await this.secrets.delete(ACCOUNT_USER_ID);
      await this.storeOrigins({});
      this.apiKey = undefined;
      this.accessToken = undefined;
      this.accountUserId = undefined;
      this.changed.fire();
    });
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

function parseOrigins(text: string | undefined): OriginRecord {
  if (!text) return {};
  try {
    return OriginRecord.parse(JSON.parse(text));
  } catch {
    return {};
  }
}
