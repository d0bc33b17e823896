import { MAX_RESULT_IMAGES, type ImageAttachment } from '../../common/conversation';
import { checkBase64Image, type ImageMediaType } from '../../common/imageRules';
import type { ToolDefinition } from '../../tools/workspaceTools';

/** A tool as a server lists it (the MCP `tools/list` entry, checked loosely: servers vary). */
export interface ServerTool {
  name: string;
  description?: string;
  inputSchema?: unknown;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; title?: string };
}

/** Both wire formats accept `^[a-zA-Z0-9_-]{1,64}$` for a tool name. */
const MAX_NAME = 64;

function clean(s: string): string {
  return s.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/**
 * `server__tool`, made valid for both wire formats and unique among `taken` (a long name is cut
 * and given a number; two tools that clean to the same name get a number too).
 */
export function qualifiedName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const base = `${clean(server)}__${clean(tool)}`;
  let name = base.slice(0, MAX_NAME);
  for (let i = 2; taken.has(name); i++) {
    const suffix = `_${i}`;
    name = `${base.slice(0, MAX_NAME - suffix.length)}${suffix}`;
  }
  return name;
}

/**
 * A server's input schema as both wire formats take it: an object schema with `properties`
 * (added when absent), without the keys some upstreams refuse at the top (`$schema`, `$id`), and
 * at most 64 KB of JSON (a larger one is replaced by an open object: the description still says
 * what to send).
 */
export function toParameters(inputSchema: unknown): ToolDefinition['parameters'] {
  const open: ToolDefinition['parameters'] = { type: 'object', properties: {}, required: [] };
  if (!inputSchema || typeof inputSchema !== 'object' || Array.isArray(inputSchema)) return open;
  const { $schema: _s, $id: _i, ...rest } = inputSchema as Record<string, unknown>;
  if (JSON.stringify(rest).length > 64 * 1024) return open;
  const properties =
    rest.properties && typeof rest.properties === 'object' && !Array.isArray(rest.properties) ? (rest.properties as Record<string, unknown>) : {};
  const required = Array.isArray(rest.required) ? rest.required.filter((r): r is string => typeof r === 'string' && r in properties) : [];
  return { ...rest, type: 'object', properties, required };
}

/** The definition the model sees: the server named in the description, so it knows whose tool it is. */
export function definitionOf(server: string, tool: ServerTool, name: string): ToolDefinition {
  const description = `${tool.description?.trim() || tool.annotations?.title || tool.name} (MCP server "${server}", tool "${tool.name}")`;
  return { name, description: description.slice(0, 4000), parameters: toParameters(tool.inputSchema), kind: 'write' };
}

/** One piece of an MCP tool result (`content` entries; others are described, not dropped). */
export interface ResultPart {
  type: string;
  text?: string;
  mimeType?: string;
  data?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string };
}

const MAX_RESULT = 64 * 1024;

/**
 * A tool result as text for the model: text as it is, an image or audio as a line saying what it
 * was, a resource link with its URI, an embedded text resource with its text; structured content
 * as JSON when there is no text. Long results keep their start and end.
 */
/** An image part a chat model can read (PNG, JPEG or WEBP within the size limit, bytes that match), else undefined. */
function imageOf(p: ResultPart, index = 0): ImageAttachment | undefined {
  if (p.type !== 'image' || !p.mimeType || !p.data || index >= MAX_RESULT_IMAGES) return undefined;
  if (checkBase64Image(p.mimeType, p.data)) return undefined;
  return { name: `image-${index + 1}`, mediaType: p.mimeType as ImageMediaType, data: p.data, detail: 'auto' };
}

/** The readable images of a tool result, at most `MAX_RESULT_IMAGES`. */
export function resultImages(content: readonly ResultPart[] | undefined): ImageAttachment[] {
  const out: ImageAttachment[] = [];
  for (const p of content ?? []) {
    const img = imageOf(p, out.length);
    if (img) out.push(img);
  }
  return out;
}

export function resultText(content: readonly ResultPart[] | undefined, structured?: unknown): string {
  const parts: string[] = [];
  let images = 0;
  for (const p of content ?? []) {
    if (p.type === 'text' && typeof p.text === 'string') parts.push(p.text);
    else if (p.type === 'image' && imageOf(p, images) && ++images)
      parts.push(
        `[image ${p.mimeType}, ${Math.round(((p.data?.length ?? 0) * 3) / 4 / 1024)} KB: shown in the tool card, and given to a model that reads images]`,
      );
    else if (p.type === 'image' || p.type === 'audio')
      parts.push(
        `[${p.type} ${p.mimeType ?? ''}, ${Math.round(((p.data?.length ?? 0) * 3) / 4 / 1024)} KB: not readable here${p.type === 'image' ? ` (${checkBase64Image(p.mimeType ?? '', p.data ?? '') ?? 'too many images'})` : ''}]`,
      );
    else if (p.type === 'resource_link') parts.push(`[resource link: ${p.name ?? ''} ${p.uri ?? ''}${p.mimeType ? ` (${p.mimeType})` : ''}]`);
    else if (p.type === 'resource' && p.resource)
      parts.push(
        typeof p.resource.text === 'string'
          ? `[resource ${p.resource.uri ?? ''}]\n${p.resource.text}`
          : `[binary resource ${p.resource.uri ?? ''} ${p.resource.mimeType ?? ''}]`,
      );
    else parts.push(`[${p.type} content]`);
  }
  if (parts.length === 0 && structured !== undefined) parts.push(JSON.stringify(structured, null, 2));
  const text = parts.join('\n');
  if (text.length <= MAX_RESULT) return text || '(the tool returned nothing)';
  const half = MAX_RESULT / 2;
  return `${text.slice(0, half)}\n… ${text.length - MAX_RESULT} characters left out …\n${text.slice(-half)}`;
}

/** The argument names of a URI template (RFC 6570: `{id}`, `{+path}`, `{?q,page}`), in order, once each. */
export function templateArguments(template: string): string[] {
  const names: string[] = [];
  for (const m of template.matchAll(/\{[+#./;?&]?([^}]+)\}/g)) {
    for (const part of m[1].split(',')) {
      const name = part.replace(/[*]$|:\d+$/, '').trim();
      if (name && !names.includes(name)) names.push(name);
    }
  }
  return names;
}
