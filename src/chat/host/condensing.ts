import * as vscode from 'vscode';
import { activeCondensation, type Conversation, type WireFormat } from '../../common/conversation';
import { describeError } from '../../shell/errors';
import { redact } from '../../shell/redact';
import type { PricedFeature } from '../../shell/services';
import { manualCut } from '../../runtime/core/budget';
import { condense } from '../../runtime/core/condense';
import { modelProfile, windowOf } from '../../runtime/host/modelProfile';
import type { Readiness } from './chatChoices';

/** What condensing by hand needs of the session. */
export interface CondenseHost {
  /** The model to summarise with, or why not now. */
  readiness(): Promise<Readiness>;
  format(model: string): WireFormat;
  save(c: Conversation): Promise<void>;
  /** The meter's figures are stale (the conversation was condensed): estimated again. */
  forgetMeasure(): void;
  pushState(): Promise<void>;
}

/**
 * Condense by hand: the model summarises all but the newest exchange (or the only one); from then
 * on the summary is sent in their place. The turns stay on screen and on disk, with the summary
 * shown where it was made.
 */
export class Condenser {
  /** Set while it runs. */
  private running = false;

  constructor(
    private readonly services: PricedFeature,
    private readonly host: CondenseHost,
  ) {}

  /** Condenses the conversation; why not, when it could not (`busy`: an answer is running). */
  async condense(c: Conversation | undefined, busy: boolean): Promise<string | undefined> {
    if (busy || this.running) return vscode.l10n.t('Wait for the reply to end before condensing.');
    if (!c || c.turns.length === 0) return vscode.l10n.t('There is nothing to condense yet.');
    const cut = manualCut(c.turns, activeCondensation(c));
    if (!cut) return vscode.l10n.t('Everything before the newest exchange is already condensed.');
    const ready = await this.host.readiness();
    if ('text' in ready) return ready.text;
    if ('failure' in ready) return describeError(this.services, ready.failure).message;
    const model = ready.model;
    this.running = true;
    try {
      const { condensation } = await condense({
        client: this.services.client(),
        model,
        format: this.host.format(model),
        turns: c.turns,
        cut,
        current: activeCondensation(c),
        window: windowOf(this.services, model),
        manual: true,
        serverCompaction: modelProfile(this.services, model, { purpose: 'chat' }).options.serverCompaction,
      });
      (c.condensations ??= []).push(condensation);
      c.updatedAt = Date.now();
      this.host.forgetMeasure();
      await this.host.save(c);
      this.services.log.info(`chat: condensed by hand (${condensation.tokensBefore} → ${condensation.tokensAfter} tokens)`);
      await this.host.pushState();
      return undefined;
    } catch (err) {
      return vscode.l10n.t('The conversation could not be condensed: {0}', redact(describeError(this.services, err).message));
    } finally {
      this.running = false;
    }
  }
}
