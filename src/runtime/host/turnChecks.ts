/**
 * What a turn a person starts and watches may do, for any surface that runs one: whether the
 * workspace's tools go with it, whether a question can be sent to the model at all (its images, its
 * size against the window), and whether the turn goes on at one of its limits (the person decides).
 */
import * as vscode from 'vscode';
import { type UserTurn } from '../../common/conversation';
import type { ModelOverride } from '../../shell/config';
import type { LogSource, PromptSource } from '../../shell/services';
import { promptLimit } from '../core/budget';
import type { TurnLimit } from '../core/engine';
import { IMAGE_TOKENS, tokensOf } from '../core/tokens';
import { userText } from '../core/wire';
import { scaleOf, windowOf, type TurnServices } from './modelProfile';

/**
 * The workspace's tools are offered only in a trusted workspace with a folder on disk, and never to
 * a model marked without tool calling (some gateways answer 400 to a tools field).
 */
export function toolsAllowed(override?: ModelOverride): boolean {
  return vscode.workspace.isTrusted && (vscode.workspace.workspaceFolders ?? []).some((f) => f.uri.scheme === 'file') && override?.toolCalling !== false;
}

/**
 * Why a question cannot be sent to this model at all, if so: images to a model marked without
 * image input, or a question that with its attachments alone takes more than the window leaves for
 * the prompt (budgeting can shorten history, not it). `request`: the system prompt and tool
 * definitions the request would carry.
 */
export function questionRefusal(
  services: TurnServices,
  model: string,
  override: ModelOverride,
  request: () => { system: string; tools: string },
  question: UserTurn,
): string | undefined {
  if (question.images.length > 0 && override.imageInput === false)
    return `${model} takes no image input (modelGateway.modelOverrides): remove the images or pick another model.`;
  const { system, tools } = request();
  const window = windowOf(services, model);
  const needed = Math.ceil((tokensOf(system) + tokensOf(tools) + tokensOf(userText(question))) * scaleOf(model)) + question.images.length * IMAGE_TOKENS;
  const room = promptLimit(window, override.maxOutputTokens);
  if (needed <= room) return undefined;
  const k = (n: number) => `${Math.round(n / 100) / 10}k`;
  const what =
    question.context.length + question.images.length > 0
      ? vscode.l10n.t('Remove attachments (or attach a selection instead of the whole file)')
      : vscode.l10n.t('Shorten it');
  return vscode.l10n.t(
    'This question needs about {0} tokens with the system prompt and tools; {1} has room for about {2} (its window of {3} less the room for the answer). {4}, or pick a model with a larger window. Nothing was sent.',
    k(needed),
    model,
    k(room),
    k(window),
    what,
  );
}

/** A limit of the turn is reached: the person decides whether it goes on for as much again. */
export async function askToGoOn(
  services: PromptSource & LogSource,
  surface: string,
  limit: TurnLimit,
  limits: { maxCostDollars: number; maxSteps: number },
): Promise<boolean> {
  const title =
    limit.kind === 'cost'
      ? vscode.l10n.t('This answer has cost ${0}, over its limit of ${1}. Go on?', limit.dollars.toFixed(2), limits.maxCostDollars.toFixed(2))
      : vscode.l10n.t('This answer has made {0} requests, its limit. Go on?', limit.requests);
  const more = limit.kind === 'cost' ? `$${limits.maxCostDollars.toFixed(2)}` : vscode.l10n.t('{0} requests', limits.maxSteps);
  const detail = vscode.l10n.t(
    'Continue allows {0} more; Stop ends the answer here (the tools it asked for are not run). The limits are the settings modelGateway.chat.maxToolSteps and modelGateway.chat.maxCostPerTurnDollars.',
    more,
  );
  const goOn = await services.prompts.confirm(title, detail, vscode.l10n.t('Continue'), 'info');
  services.log.info(`${surface}: the turn reached its ${limit.kind} limit; ${goOn ? 'going on' : 'stopped'}`);
  return goOn;
}
