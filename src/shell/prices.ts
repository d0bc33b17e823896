import type { SettingsSource, GatewayConnection, CredentialSource, LogSource } from './services';
import { usageSettings } from './config';
import type { ModelPrice } from '../gateway';
import { PriceBook } from '../common/prices';

const FRESH_MS = 60 * 60_000;
const RETRY_MS = 5 * 60_000;
/** How long anything that can go on without prices waits for them (a turn's cost, the model list, the wire format). */
export const PRICES_WAIT_MS = 3000;

/**
 * The gateway's prices, read once an hour per gateway (a failure is retried after five minutes,
 * meanwhile prices come from settings only), joined with the user's own.
 */
export class Prices {
  private cached: { baseUrl: string; at: number; ttl: number; prices: Promise<ModelPrice[] | undefined> } | undefined;

  constructor(private readonly services: SettingsSource & GatewayConnection & CredentialSource & LogSource) {}

  async book(): Promise<PriceBook> {
    const overrides = usageSettings().prices;
    if (!this.services.isConfigured()) return new PriceBook(undefined, overrides);
    const baseUrl = this.services.settings().baseUrl;
    const now = Date.now();
    if (!this.cached || this.cached.baseUrl !== baseUrl || now - this.cached.at > this.cached.ttl) {
      const entry = { baseUrl, at: now, ttl: FRESH_MS, prices: Promise.resolve<ModelPrice[] | undefined>(undefined) };
      const client = this.services.client();
      // new-api prices by the user's group (its ratio): known with the access token.
      const group = this.services.credentials.getAccessToken()
        ? client.account.self().then(
            (me) => me.group,
            () => undefined,
          )
        : Promise.resolve(undefined);
      entry.prices = group
        .then((g) => client.account.usage.pricing({ group: g }))
        .catch((err: unknown) => {
          entry.ttl = RETRY_MS;
          this.services.log.warn(
            `prices: the gateway's price list could not be read (${err instanceof Error ? err.message : String(err)}); using prices from settings only`,
          );
          return undefined;
        });
      this.cached = entry;
    }
    const book = new PriceBook(await this.cached.prices, overrides);
    this.latest = book;
    return book;
  }

  /**
   * The book if it comes within `PRICES_WAIT_MS` (read once an hour: usually at once), else
   * undefined: a gateway slow to answer its price list never holds a turn, a cost or a list up.
   */
  async bookWithin(): Promise<PriceBook | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), PRICES_WAIT_MS)));
    try {
      return await Promise.race([this.book().catch(() => undefined), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The last book read (for decisions that can't wait: a model's wire format). */
  latest: PriceBook | undefined;

  /** Forget the gateway's prices (a new connection, or a refresh asked for). */
  reset(): void {
    this.cached = undefined;
    this.latest = undefined;
  }
}
