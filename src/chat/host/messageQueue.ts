import * as vscode from 'vscode';
import { newId, type ImageAttachment, type UserTurn } from '../../common/conversation';
import type { ToWebview, ViewState } from '../../common/chatProtocol';
import type { LogSource } from '../../shell/services';
import { userText } from '../../runtime/core/wire';

/** A message sent while a turn ran. */
export interface QueuedMessage {
  id: string;
  text: string;
  images: ImageAttachment[];
  context: UserTurn['context'];
  /** Steered into the running turn's next request rather than sent after it. */
  steer: boolean;
}

/**
 * Messages sent while a turn runs, in order (this window's; a reload forgets them, as an unsent
 * draft): each sent when the turn ends, edited back into the input, removed, or steered into the
 * running turn's next request.
 */
export class MessageQueue {
  private items: QueuedMessage[] = [];

  constructor(
    private readonly services: LogSource,
    private readonly post: (m: ToWebview) => void,
    /** The queue changed: the view is told. */
    private readonly changed: () => Promise<void>,
  ) {}

  get size(): number {
    return this.items.length;
  }

  /** What the view shows of the queue (nothing when it is empty). */
  view(): Pick<ViewState, 'queued'> {
    return this.items.length > 0 ? { queued: this.items.map((q) => ({ id: q.id, text: q.text, steer: q.steer, images: q.images.length })) } : {};
  }

  clear(): void {
    this.items = [];
  }

  async add(text: string, images: ImageAttachment[], context: UserTurn['context']): Promise<void> {
    this.items.push({ id: newId('q'), text, images, context, steer: false });
    this.services.log.info(`chat: a message was queued while the reply runs (${this.items.length} queued)`);
    await this.changed();
  }

  /** Edit (back into the input), remove, or steer (into the running turn's next request) a queued message. */
  async act(action: 'edit' | 'remove' | 'steer', id: string): Promise<void> {
    const item = this.items.find((q) => q.id === id);
    if (!item) return;
    if (action === 'steer') {
      if (item.images.length > 0) {
        this.post({
          type: 'notice',
          level: 'info',
          text: vscode.l10n.t('A message with images cannot steer the running reply: it is sent when the reply ends.'),
        });
        return;
      }
      item.steer = true;
    } else {
      this.items = this.items.filter((q) => q !== item);
      if (action === 'edit') this.post({ type: 'restore-draft', text: item.text, images: item.images, context: item.context, reason: '' });
    }
    await this.changed();
  }

  /** The steering messages, taken by the running turn for its next request. */
  takeSteering(): string[] {
    const steer = this.items.filter((q) => q.steer);
    if (steer.length === 0) return [];
    this.items = this.items.filter((q) => !q.steer);
    this.services.log.info(`chat: ${steer.length} steering message(s) added to the next request`);
    void this.changed();
    return steer.map((q) => userText({ id: q.id, role: 'user', text: q.text, images: [], context: q.context, at: Date.now() }));
  }

  /**
   * A turn ended: steering that came too late for it is sent as a message of its own. The next
   * message to send, unless `hold` (the person stopped the turn, or another runs): then they stay,
   * for the person to send, edit or remove.
   */
  next(hold: boolean): QueuedMessage | undefined {
    for (const q of this.items) q.steer = false;
    return hold ? undefined : this.items.shift();
  }
}
