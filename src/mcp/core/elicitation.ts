/**
 * MCP elicitation in form mode: the flat schema a server sends (`requestedSchema`), read as the
 * fields a person fills in, each answer checked and converted to what the schema says. No `vscode`.
 */
import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';

const Option = z.object({ const: z.string(), title: z.optional(z.string()) });
const Property = z.looseObject({
  type: z.optional(z.string()),
  title: z.optional(z.string()),
  description: z.optional(z.string()),
  default: z.optional(z.unknown()),
  format: z.optional(z.string()),
  minLength: z.optional(z.number()),
  maxLength: z.optional(z.number()),
  minimum: z.optional(z.number()),
  maximum: z.optional(z.number()),
  enum: z.optional(z.array(z.string())),
  enumNames: z.optional(z.array(z.string())),
  oneOf: z.optional(z.array(Option)),
  minItems: z.optional(z.number()),
  maxItems: z.optional(z.number()),
  items: z.optional(z.looseObject({ enum: z.optional(z.array(z.string())), anyOf: z.optional(z.array(Option)) })),
});
const RequestedSchema = z.object({ properties: z.record(z.string(), Property), required: z.optional(z.array(z.string())) });

export interface ChoiceOption {
  value: string;
  label: string;
}

interface FieldBase {
  key: string;
  label: string;
  description?: string;
  required: boolean;
}

export type Field = FieldBase &
  (
    | { kind: 'text'; format?: string; minLength?: number; maxLength?: number; default?: string }
    | { kind: 'number'; integer: boolean; minimum?: number; maximum?: number; default?: number }
    | { kind: 'boolean'; default?: boolean }
    | { kind: 'choice'; options: ChoiceOption[]; default?: string }
    | { kind: 'choices'; options: ChoiceOption[]; minItems?: number; maxItems?: number; default?: string[] }
  );

/** Words that name a secret: a form must not ask for one (MCP forbids it), and the person is warned. */
const SECRET_WORDS = /pass(word|phrase)|secret|token|api[\s_-]?key|credential|private[\s_-]?key|\bpin\b|otp/i;

/** The fields of a form, in the server's order; a property of a type MCP does not allow is an error. */
export function fieldsOf(schema: unknown): Field[] {
  const parsed = RequestedSchema.safeParse(schema);
  if (!parsed.success) throw new Error('the requested schema is not a flat object of properties');
  const required = new Set(parsed.data.required ?? []);
  return Object.entries(parsed.data.properties).map(([key, p]) => {
    const base: FieldBase = { key, label: p.title?.trim() || key, required: required.has(key), ...(p.description ? { description: p.description } : {}) };
    const options = (values: string[] | undefined, names: string[] | undefined, titled: z.infer<typeof Option>[] | undefined): ChoiceOption[] | undefined =>
      titled?.length
        ? titled.map((o) => ({ value: o.const, label: o.title ?? o.const }))
        : values?.length
          ? values.map((v, i) => ({ value: v, label: names?.[i] ?? v }))
          : undefined;
    if (p.type === 'array') {
      const opts = options(p.items?.enum, undefined, p.items?.anyOf);
      if (!opts) throw new Error(`the field "${key}" is a list without choices`);
      const def = Array.isArray(p.default) ? p.default.filter((v): v is string => typeof v === 'string') : undefined;
      return {
        ...base,
        kind: 'choices',
        options: opts,
        ...(p.minItems !== undefined ? { minItems: p.minItems } : {}),
        ...(p.maxItems !== undefined ? { maxItems: p.maxItems } : {}),
        ...(def ? { default: def } : {}),
      };
    }
    if (p.type === 'string' || p.type === undefined) {
      const opts = options(p.enum, p.enumNames, p.oneOf);
      if (opts) return { ...base, kind: 'choice', options: opts, ...(typeof p.default === 'string' ? { default: p.default } : {}) };
      if (p.type === undefined) throw new Error(`the field "${key}" has no type`);
      return {
        ...base,
        kind: 'text',
        ...(p.format ? { format: p.format } : {}),
        ...(p.minLength !== undefined ? { minLength: p.minLength } : {}),
        ...(p.maxLength !== undefined ? { maxLength: p.maxLength } : {}),
        ...(typeof p.default === 'string' ? { default: p.default } : {}),
      };
    }
    if (p.type === 'number' || p.type === 'integer') {
      return {
        ...base,
        kind: 'number',
        integer: p.type === 'integer',
        ...(p.minimum !== undefined ? { minimum: p.minimum } : {}),
        ...(p.maximum !== undefined ? { maximum: p.maximum } : {}),
        ...(typeof p.default === 'number' ? { default: p.default } : {}),
      };
    }
    if (p.type === 'boolean') return { ...base, kind: 'boolean', ...(typeof p.default === 'boolean' ? { default: p.default } : {}) };
    throw new Error(`the field "${key}" is of type ${p.type}, which a form cannot ask for`);
  });
}

/** Whether a field reads as a request for a secret (its key, title or description). */
export function asksForSecret(f: Field): boolean {
  return SECRET_WORDS.test(`${f.key} ${f.label} ${f.description ?? ''}`);
}

/** Why typed text is not a valid answer to a text or number field, or undefined. Empty is valid for an optional field. */
export function problemWith(f: Field, text: string): string | undefined {
  const value = text.trim();
  if (!value) return f.required ? `${f.label} is required` : undefined;
  if (f.kind === 'number') {
    const n = Number(value);
    if (!Number.isFinite(n)) return `${f.label} is a number`;
    if (f.integer && !Number.isInteger(n)) return `${f.label} is a whole number`;
    if (f.minimum !== undefined && n < f.minimum) return `${f.label} is at least ${f.minimum}`;
    if (f.maximum !== undefined && n > f.maximum) return `${f.label} is at most ${f.maximum}`;
    return undefined;
  }
  if (f.kind !== 'text') return undefined;
  if (f.minLength !== undefined && value.length < f.minLength) return `${f.label} has at least ${f.minLength} characters`;
  if (f.maxLength !== undefined && value.length > f.maxLength) return `${f.label} has at most ${f.maxLength} characters`;
  if (f.format === 'email' && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) return `${f.label} is an email address (name@example.com)`;
  if (f.format === 'uri' && !/^[a-z][a-z0-9+.-]*:\S+$/i.test(value)) return `${f.label} is a URI (https://…)`;
  if (f.format === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${f.label} is a date (YYYY-MM-DD)`;
  if (f.format === 'date-time' && Number.isNaN(Date.parse(value))) return `${f.label} is a date and time (YYYY-MM-DDTHH:MM:SSZ)`;
  return undefined;
}

/** The typed text as the schema's value (a number for number fields); undefined for an empty optional answer. */
export function valueOf(f: Field, text: string): string | number | undefined {
  const value = text.trim();
  if (!value) return undefined;
  return f.kind === 'number' ? Number(value) : value;
}

/** The text a field's default is shown as in an input box. */
export function defaultText(f: Field): string {
  return f.kind === 'text' || f.kind === 'number' ? (f.default !== undefined ? String(f.default) : '') : '';
}

/** What the dialog says before the first field: the server's message and the fields it asks for. */
export function formSummary(fields: readonly Field[]): string {
  return fields.map((f) => (f.required ? l10n.t('{0} (required)', f.label) : f.label)).join(', ');
}
