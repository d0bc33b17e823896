import * as vscode from 'vscode';
import type { ChatSettings } from '../../shell/config';
import { redact } from '../../shell/redact';
import type { PricedFeature } from '../../shell/services';
import { runSubagent, Slots, startWithin, SUBAGENT_MAX_STEPS, subagentPrompt, subagentRefusal } from '../../runtime/core/subagents';
import { costOfParts } from '../../runtime/host/cost';
import { chainFor, engineFallback } from '../../runtime/host/fallbackChain';
import { usageParts } from '../../common/conversation';
import { modelProfile } from '../../runtime/host/modelProfile';
import type { SubagentHost } from './chatTools';

/**
 * The subagents of one turn: the model (`modelGateway.agent.subagentModel`, else the turn's), its
 * wire format and window, the parallel cap, and each one's cost from the gateway's prices.
 */
export function subagentHost(o: {
  services: PricedFeature;
  parentModel: string;
  settings: ChatSettings;
  answerDollars: () => number | undefined;
}): SubagentHost {
  const { services, settings } = o;
  const slots = new Slots(settings.maxParallelSubagents);
  const model = () => settings.subagentModel || o.parentModel;
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.name);
  let started = 0;
  return {
    model,
    run: async ({ task, tools, signal, record, onUpdate }) => {
      const m = model();
      // Bounded per answer: Slots bounds how many run at once, this how many run at all.
      const n = ++started;
      const refused = (why: string) => {
        record.status = 'stopped';
        record.error = why;
        return { content: `Error: ${why}`, isError: true };
      };
      try {
        return await startWithin(
          slots,
          () => subagentRefusal(n, o.answerDollars(), settings.maxCostDollars),
          refused,
          async () => {
            services.log.info(`chat: subagent "${record.label}" started (${m}, ${tools.definitions.length} read-only tools)`);
            const models = chainFor(m);
            const result = await runSubagent({
              client: services.client(),
              modelOptions: modelProfile(services, models[0], { purpose: 'chat: subagent' }).options,
              fallback: engineFallback(services, 'chat: subagent', models, (x) => modelProfile(services, x, { purpose: 'chat: subagent' }).options),
              system: subagentPrompt({ folders }),
              task,
              tools,
              record,
              maxSteps: Math.min(settings.maxSteps, SUBAGENT_MAX_STEPS),
              // The answer's limit holds inside the subagent: checked against the whole answer's cost (this subagent's tokens as they stream included).
              maxCostDollars: settings.maxCostDollars,
              costSoFar: o.answerDollars,
              signal,
              onUpdate: () => onUpdate(),
            });
            record.cost = await costOfParts(services, usageParts({ model: m, usage: record.usage, usageBy: record.usageBy }), settings.cacheTtl);
            if (result.limitReached) services.log.info(`chat: subagent "${record.label}" stopped at ${result.limitReached}`);
            if (record.error) record.error = redact(record.error);
            const u = record.usage;
            services.log.info(
              `chat: subagent "${record.label}" ended ${record.status} after ${record.ms ?? 0} ms, ${record.steps.length} request(s), ${u.input} in / ${u.output} out tokens`,
            );
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
