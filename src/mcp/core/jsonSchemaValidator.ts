/**
 * The MCP SDK's JSON Schema validator (it checks a tool's structured content against the tool's
 * output schema), built on zod's `fromJSONSchema`: the MCP bundle holds zod already, so ajv, its
 * formats and fast-uri (about 140 KB of the bundle) stay out. The build puts this module where the
 * SDK's client imports `validation/ajv-provider.js` (see esbuild.js); the class keeps that name.
 */
import { fromJSONSchema } from 'zod';

type Result<T> = { valid: true; data: T; errorMessage: undefined } | { valid: false; data: undefined; errorMessage: string };

export class AjvJsonSchemaValidator {
  getValidator<T>(schema: object): (input: unknown) => Result<T> {
    let check: ((input: unknown) => { success: boolean; error?: { message: string } }) | undefined;
    try {
      const zodSchema = fromJSONSchema(schema as Parameters<typeof fromJSONSchema>[0]);
      check = (input) => zodSchema.safeParse(input);
    } catch {
      // A schema zod cannot read is not held against the server: its content is shown as text only.
      check = undefined;
    }
    return (input) => {
      const r = check?.(input);
      if (!r || r.success) return { valid: true, data: input as T, errorMessage: undefined };
      return { valid: false, data: undefined, errorMessage: r.error?.message ?? 'does not match the output schema' };
    };
  }
}
