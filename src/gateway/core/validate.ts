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

function issuesOf(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((i) => ({ path: formatPath(i.path), message: i.message }));
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
