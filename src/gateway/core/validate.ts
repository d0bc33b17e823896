import type { z } from 'zod';
import { GatewayError, ValidationError } from './errors';

/** Formats a zod path the way a developer writes it: `messages[2].content[0].image_url.url`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out;
}

type Issue = z.core.$ZodIssue;

/**
 * Flattens zod issues. A union whose every branch failed reports "Invalid input"; instead we
 * report the branch that got furthest (its issues with the deepest paths), so the message names
 * the real field and rule, e.g. `messages[0].content[0].image_url.detail`.
 */
function flatten(issue: Issue, prefix: readonly PropertyKey[]): { path: PropertyKey[]; message: string }[] {
  const path = [...prefix, ...issue.path];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const depth = (branch: Issue[]) => Math.max(...branch.map((i) => i.path.length));
    const best = issue.errors.reduce((a, b) => (depth(b) > depth(a) ? b : a));
    if (depth(best) > 0) return best.flatMap((i) => flatten(i, path));
  }
  return [{ path, message: issue.message }];
}

function issuesOf(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.flatMap((i) => flatten(i, [])).map((i) => ({ path: formatPath(i.path), message: i.message }));
}

/** Validates a request before it is sent; throws a ValidationError naming each field and rule. */
export function validateRequest<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new ValidationError(issuesOf(result.error));
  return result.data;
}

/** Checks a response's essential shape; unknown fields pass through untouched. */
export function parseResponse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const detail = issuesOf(result.error)
      .slice(0, 3)
      .map((i) => (i.path ? `${i.path}: ${i.message}` : i.message))
      .join('; ');
    throw new GatewayError(`The gateway's answer to ${what} has an unexpected shape (${detail}).`, { type: 'invalid_response' });
  }
  return result.data;
}
