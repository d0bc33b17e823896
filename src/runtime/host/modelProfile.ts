/**
 * One builder of what a model turn needs to know of its model, for every surface that runs one
 * (the chat, subagents, background sessions, VS Code's chat): the wire format, the person's
 * per-model overrides (output room, reasoning effort, reasoning sent back, image input), the
 * context window (learned from a refusal, then kept for every surface of this window), the token
 * scale learned from usage, and the gateway's missing routes remembered (Responses, Gemini,
 * compaction). A surface adds only what it decides itself: its tools, its limits, its prompt.
 */
import { resolveFormat, takesImages, type WireFormat } from '../../common/conversation';
import { chatSettings, modelOverride, type ModelOverride } from '../../shell/config';
import { redact } from '../../shell/redact';
import type { GatewayFeature, PriceSource } from '../../shell/services';
import { contextWindowFor } from '../core/budget';
import type { ModelOptions } from '../core/engine';
import { familyFactor } from '../core/tokens';

/** What a model turn needs of the platform: the client, settings, the log and the prices with what the gateway lists per model. */
export type TurnServices = GatewayFeature & PriceSource;

/** What was learned of each model in this window: shared by every surface, so a window the chat learned holds for a background session too. */
const learned = { windows: new Map<string, number>(), scales: new Map<string, number>() };

/** The model's context window: learned from the gateway, else the person's override, else what is known of the family. */
export function windowOf(services: TurnServices, model: string): number {
  return learned.windows.get(model) ?? contextWindowFor(model, modelOverride(services.settings().modelOverrides, model).contextWindow);
}

/** Token estimates × this for the model (learned from usage, else the family's factor). */
export function scaleOf(model: string): number {
  return learned.scales.get(model) ?? familyFactor(model);
}

export interface ModelProfile {
  options: ModelOptions;
  override: ModelOverride;
}

/**
 * The model's part of a turn. `format`: the surface's choice where it has one (the chat's format
 * picker), else the pattern setting and what the gateway lists for the model. `log`: where a
 * learned window is said (the surface's log prefix).
 */
export function modelProfile(services: TurnServices, model: string, o: { format?: WireFormat; purpose: string }): ModelProfile {
  const settings = chatSettings();
  const override = modelOverride(services.settings().modelOverrides, model);
  const format = o.format ?? resolveFormat(model, 'auto', settings.pattern, services.formatFacts(model));
  const facts = services.formatFacts(model);
  return {
    override,
    options: {
      model,
      format,
      cacheTtl: settings.cacheTtl,
      maxTokens: override.maxOutputTokens,
      reasoningEffort: override.reasoningEffort,
      reasoningBack: override.reasoningBack,
      imageInput: takesImages(model, override.imageInput),
      contextWindow: windowOf(services, model),
      onContextWindow: (window) => {
        learned.windows.set(model, window);
        services.log.info(`${o.purpose}: ${model} has a context window of ${window} tokens (the gateway said so); requests are fitted to it`);
      },
      tokenScale: scaleOf(model),
      onTokenScale: (scale) => learned.scales.set(model, scale),
      onNoResponsesRoute: () => services.noResponsesRoute(model),
      onNoGeminiRoute: () => services.noGeminiRoute(model),
      serverCompaction: facts.noCompactRoute
        ? undefined
        : {
            onNoRoute: () => services.noCompactRoute(model),
            onFailed: (message) =>
              services.log.warn(`${o.purpose}: the gateway could not compact the conversation (${redact(message)}); the model summarises it instead`),
          },
    },
  };
}
