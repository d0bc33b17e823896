import * as vscode from 'vscode';
import { resolveFormat, type AssistantTurn, type TurnCost, type Usage } from '../../common/conversation';
import type { PriceBook } from '../../common/prices';
import type { ChatSettings } from '../../shell/config';
import { modelOverride } from '../../shell/config';
import { redact } from '../../shell/redact';
import type { PricedFeature } from '../../shell/services';
import { contextWindowFor } from '../core/budget';
import { runSubagent, Slots, subagentPrompt } from '../core/subagents';
import { familyFactor } from '../core/tokens';
import type { SubagentHost } from './turnTools';

/**
 * The subagents of one turn: the model (`modelGateway.agent.subagentModel`, else the turn's), its
 * wire format and window, the parallel cap, and each one's cost from the gateway's prices.
 */
export function subagentHost(o: { services: PricedFeature; parentModel: string; settings: ChatSettings }): SubagentHost {
  const { services, settings } = o;
  const slots = new Slots(settings.maxParallelSubagents);
  const model = () => settings.subagentModel || o.parentModel;
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.name);
  return {
    model,
    run: async ({ task, tools, signal, record, onUpdate }) => {
      const m = model();
      const override = modelOverride(services.settings().modelOverrides, m);
      try {
        return await slots.run(
          async () => {
            services.log.info(`chat: subagent "${record.label}" started (${m}, ${tools.definitions.length} read-only tools)`);
            const result = await runSubagent({
              client: services.client(),
              model: m,
              format: resolveFormat(m, 'auto', settings.pattern, services.formatFacts(m)),
              system: subagentPrompt({ folders }),
              task,
              tools,
              record,
              maxSteps: settings.maxSteps,
              maxTokens: override.maxOutputTokens,
              contextWindow: contextWindowFor(m, override.contextWindow),
              tokenScale: familyFactor(m),
              cacheTtl: settings.cacheTtl,
              signal,
              onUpdate: () => onUpdate(),
            });
            record.cost = await costOf(services, m, record.usage, settings.cacheTtl);
            if (record.error) record.error = redact(record.error);
            const u = record.usage;
            services.log.info(`chat: subagent "${record.label}" ended ${record.status} after ${record.ms ?? 0} ms, ${record.steps.length} request(s), ${u.input} in / ${u.output} out tokens`);
            if (u.output > 0) services.notifySpend();
            return result.isError ? { ...result, content: redact(result.content) } : result;
          },
          signal,
          () => onUpdate(),
        );
      } catch (err) {
        // Stopped while waiting for a slot: it never started.
        record.status = 'stopped';
        return { content: `The subagent did not start: ${err instanceof Error ? err.message : String(err)}.`, isError: true };
      }
    },
  };
}

/** What these tokens cost at the model's price (unknown without a price, or when the price list takes over 3 s). */
export async function costOf(services: PricedFeature, model: string, usage: Usage, cacheTtl: '5m' | '1h'): Promise<TurnCost | undefined> {
  if (usage.input + usage.output === 0) return undefined;
  try {
    const book = await Promise.race([services.prices.book(), new Promise<undefined>((r) => setTimeout(() => r(undefined), 3000))]);
    return book ? { ...book.cost(model, usage, 1, cacheTtl), estimated: !!usage.estimated } : undefined;
  } catch {
    return undefined;
  }
}

/** What a turn's subagents cost together, at their own models' prices (dollars). */
export function subagentDollars(turn: AssistantTurn, book?: PriceBook, cacheTtl: '5m' | '1h' = '5m'): number {
  let sum = 0;
  for (const s of turn.steps)
    for (const c of s.toolCalls) {
      const run = c.subagent;
      if (!run) continue;
      sum += run.cost?.dollars ?? (book ? (book.cost(run.model, run.usage, 1, cacheTtl).dollars ?? 0) : 0);
    }
  return sum;
}
