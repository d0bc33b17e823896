/** Messages between the Usage view and the host, checked with zod on arrival on each side. */
import * as z from 'zod/mini';
import { FIX_COMMANDS, type FixCommand } from './fixes';
import type { UsageReport } from './usageReport';

export const FromUsageView = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('range'), days: z.union([z.literal(7), z.literal(30)]) }),
  z.object({ type: z.literal('refresh') }),
  z.object({ type: z.literal('export') }),
  // Only the commands a fix button names (the view could otherwise run any command with no arguments).
  z.object({ type: z.literal('fix'), command: z.enum(FIX_COMMANDS) }),
]);
export type FromUsageView = z.infer<typeof FromUsageView>;

export type ToUsageView =
  | { type: 'loading'; rangeDays: number }
  | { type: 'report'; report: UsageReport }
  | { type: 'error'; message: string; fixes: { title: string; command: FixCommand }[] }
  | { type: 'exported'; rows: number; file: string };

/**
 * What the view checks on arrival. The report is checked for the fields the view draws from
 * before anything else (the host builds it from checked gateway data); the rest passes through.
 */
export const ToUsageViewSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('loading'), rangeDays: z.number() }),
  z.object({
    type: z.literal('report'),
    report: z.looseObject({
      mode: z.enum(['full', 'key-only']),
      days: z.array(z.string()),
      series: z.array(z.looseObject({ name: z.string(), dollars: z.array(z.number()) })),
      dailyTotals: z.array(z.number()),
      totalDollars: z.number(),
    }),
  }),
  z.object({ type: z.literal('error'), message: z.string(), fixes: z.array(z.object({ title: z.string(), command: z.enum(FIX_COMMANDS) })) }),
  z.object({ type: z.literal('exported'), rows: z.number(), file: z.string() }),
]);
