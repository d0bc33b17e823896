/** Messages between the Usage view and the host. What the view sends is checked with zod. */
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
