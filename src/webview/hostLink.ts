import * as l10n from '@vscode/l10n';
import type { FromWebview, ToWebview } from '../common/chatProtocol';
import { ToWebviewSchema } from '../common/chatViewSchemas';
import { HostChannel } from './channel';

/** The host's answer to a request: done, or why not. */
export type Result = { ok: boolean; message?: string };

/** The chat view's channel to the extension (what the host sends is checked with `ToWebviewSchema`). */
export const channel = new HostChannel<ToWebview, FromWebview>(ToWebviewSchema, 'chat');
export const post = (m: FromWebview) => channel.post(m);

/** Sends a message that the host answers (by its request id); resolves with the answer. */
export async function request(m: Parameters<typeof channel.request>[0]): Promise<Result> {
  const reply = await channel.request(m);
  return reply.type === 'result' ? { ok: reply.ok, message: reply.message } : { ok: false, message: l10n.t('The extension answered with something else.') };
}
