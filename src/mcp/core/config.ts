import * as z from 'zod/mini';

/**
 * MCP server configuration in VS Code's own format (`.vscode/mcp.json`): `servers` by name, each
 * a stdio command or an HTTP/SSE URL, and `inputs` whose answers are asked once and kept in
 * secret storage. `${input:id}`, `${workspaceFolder}`, `${userHome}` and `${env:NAME}` are
 * replaced in strings.
 */

const Strings = z.record(z.string(), z.string());

const StdioServer = z.object({
  type: z.optional(z.literal('stdio')),
  command: z.string().check(z.minLength(1)),
  args: z.optional(z.array(z.string())),
  env: z.optional(z.record(z.string(), z.nullable(z.union([z.string(), z.number()])))),
  envFile: z.optional(z.string()),
  cwd: z.optional(z.string()),
});

const RemoteServer = z.object({
  type: z.optional(z.enum(['http', 'sse'])),
  url: z.url(),
  headers: z.optional(Strings),
});

const Input = z.object({
  type: z.literal('promptString'),
  id: z.string().check(z.regex(/^[\w.-]{1,100}$/)),
  description: z.optional(z.string()),
  password: z.optional(z.boolean()),
  default: z.optional(z.string()),
});

export const McpFileSchema = z.object({
  servers: z.optional(z.record(z.string(), z.unknown())),
  inputs: z.optional(z.array(z.unknown())),
});

export type InputSpec = z.infer<typeof Input>;

export type ServerSpec =
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string>; envFile?: string; cwd?: string }
  | { kind: 'http' | 'sse'; url: string; headers: Record<string, string> };

export interface ServerConfig {
  name: string;
  /** Where it was defined: the user's settings, or a workspace file (code from the repository). */
  source: 'user' | 'workspace';
  spec: ServerSpec;
}

export interface ParsedConfig {
  servers: ServerConfig[];
  inputs: InputSpec[];
  /** Entries that were left out, and why (shown in the log and the servers list). */
  problems: string[];
}

/** Reads one configuration (the file's parsed JSON, or the setting's value). */
export function parseServers(raw: unknown, source: ServerConfig['source']): ParsedConfig {
  const file = McpFileSchema.safeParse(raw ?? {});
  if (!file.success) return { servers: [], inputs: [], problems: ['the configuration is not an object with "servers"'] };
  const problems: string[] = [];
  const servers: ServerConfig[] = [];
  for (const [name, value] of Object.entries(file.data.servers ?? {})) {
    if (!/^[\w.-]{1,64}$/.test(name)) {
      problems.push(`"${name}": a server name is letters, digits, "_", "." or "-" (at most 64)`);
      continue;
    }
    const type = (value as { type?: unknown } | null)?.type;
    if (type === 'http' || type === 'sse' || (type === undefined && typeof (value as { url?: unknown })?.url === 'string')) {
      const r = RemoteServer.safeParse(value);
      if (!r.success) problems.push(`"${name}": needs a valid "url"`);
      else servers.push({ name, source, spec: { kind: r.data.type ?? 'http', url: r.data.url, headers: r.data.headers ?? {} } });
      continue;
    }
    const r = StdioServer.safeParse(value);
    if (!r.success) {
      problems.push(`"${name}": needs a "command" (stdio) or a "url" (http, sse)`);
      continue;
    }
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.data.env ?? {})) if (v !== null) env[k] = String(v);
    servers.push({
      name,
      source,
      spec: {
        kind: 'stdio',
        command: r.data.command,
        args: r.data.args ?? [],
        env,
        ...(r.data.envFile ? { envFile: r.data.envFile } : {}),
        ...(r.data.cwd ? { cwd: r.data.cwd } : {}),
      },
    });
  }
  const inputs: InputSpec[] = [];
  for (const i of file.data.inputs ?? []) {
    const r = Input.safeParse(i);
    if (r.success) inputs.push(r.data);
    else problems.push(`an input is not a promptString with an id`);
  }
  return { servers, inputs, problems };
}

/** What the person confirms for a workspace server: exactly what would run (or where it connects). */
export function commandLineOf(spec: ServerSpec): string {
  if (spec.kind !== 'stdio') return `${spec.kind.toUpperCase()} ${spec.url}`;
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const env = Object.keys(spec.env).length
    ? `${Object.entries(spec.env)
        .map(([k, v]) => `${k}=${quote(v)}`)
        .join(' ')} `
    : '';
  return `${env}${[spec.command, ...spec.args].map(quote).join(' ')}${spec.cwd ? `  (in ${spec.cwd})` : ''}${spec.envFile ? `  (env file ${spec.envFile})` : ''}`;
}

export interface Variables {
  workspaceFolder?: string;
  userHome: string;
  env: Record<string, string | undefined>;
  /** Answers to `inputs`, by id (absent: not asked yet). */
  inputs: Record<string, string | undefined>;
}

/** The `${input:…}` ids a server's strings use. */
export function inputsUsed(spec: ServerSpec): string[] {
  const ids = new Set<string>();
  for (const s of stringsOf(spec)) for (const m of s.matchAll(/\$\{input:([\w.-]+)\}/g)) ids.add(m[1]);
  return [...ids];
}

function stringsOf(spec: ServerSpec): string[] {
  return spec.kind === 'stdio'
    ? [spec.command, ...spec.args, ...Object.values(spec.env), spec.cwd ?? '', spec.envFile ?? '']
    : [spec.url, ...Object.values(spec.headers)];
}

/** Replaces the variables; an unknown one is an error (a server started with a literal `${…}` would fail obscurely). */
export function resolveVariables(spec: ServerSpec, v: Variables): ServerSpec {
  const sub = (s: string) =>
    s.replace(/\$\{([^}]+)\}/g, (whole, name: string) => {
      if (name === 'workspaceFolder' && v.workspaceFolder) return v.workspaceFolder;
      if (name === 'userHome') return v.userHome;
      if (name.startsWith('env:')) return v.env[name.slice(4)] ?? '';
      if (name.startsWith('input:')) {
        const answer = v.inputs[name.slice(6)];
        if (answer === undefined) throw new Error(`${whole} has no answer yet`);
        return answer;
      }
      throw new Error(`${whole} is not a variable this extension knows`);
    });
  const map = (r: Record<string, string>) => Object.fromEntries(Object.entries(r).map(([k, x]) => [k, sub(x)]));
  if (spec.kind === 'stdio')
    return {
      ...spec,
      command: sub(spec.command),
      args: spec.args.map(sub),
      env: map(spec.env),
      ...(spec.cwd ? { cwd: sub(spec.cwd) } : {}),
      ...(spec.envFile ? { envFile: sub(spec.envFile) } : {}),
    };
  return { ...spec, url: sub(spec.url), headers: map(spec.headers) };
}

/** `KEY=value` lines of an env file (comments, `export`, quotes). */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][\w.]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m || line.trimStart().startsWith('#')) continue;
    let value = m[2];
    if (/^"(.*)"$/.test(value)) value = value.slice(1, -1).replace(/\\n/g, '\n');
    else if (/^'(.*)'$/.test(value)) value = value.slice(1, -1);
    else value = value.replace(/\s+#.*$/, '');
    out[m[1]] = value;
  }
  return out;
}
