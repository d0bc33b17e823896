/** The Usage view's fallbacks table: the counts kept per local day and model, for the days shown. */
import type { FallbackRow } from '../../common/usageReport';

/** Each model's fallbacks in `days`, the most first; models with none in the range are left out. */
export function fallbackRows(counts: Readonly<Record<string, Readonly<Record<string, number>>>>, days: readonly string[]): FallbackRow[] {
  const rows = new Map<string, FallbackRow>();
  for (const day of [...days].sort()) {
    for (const [model, count] of Object.entries(counts[day] ?? {})) {
      if (!Number.isFinite(count) || count <= 0) continue;
      const row = rows.get(model) ?? { model, total: 0, byDay: [] };
      row.total += count;
      row.byDay.push({ day, count });
      rows.set(model, row);
    }
  }
  return [...rows.values()].sort((a, b) => b.total - a.total || a.model.localeCompare(b.model));
}
