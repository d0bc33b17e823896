import * as vscode from 'vscode';
import type { CredentialSource, InteractiveFeature } from '../../shell/services';
import { asksForSecret, defaultText, fieldsOf, formSummary, problemWith, valueOf, type Field } from '../core/elicitation';
import { loadMcpSdk } from './sdk';

export interface ElicitParams {
  mode?: 'form' | 'url';
  message: string;
  requestedSchema?: unknown;
  url?: string;
  elicitationId?: string;
}

type Value = string | number | boolean | string[];
type ElicitResult = { action: 'accept'; content?: Record<string, Value> } | { action: 'decline' | 'cancel' };

const CANCEL: ElicitResult = { action: 'cancel' };
const leaveEmpty = (): string => vscode.l10n.t('Leave empty');

/**
 * Elicitation for MCP servers: a server's `elicitation/create` asks the person, never anyone else.
 * A form is a modal that names the server, its message and its fields, then one input box or
 * quick pick per field; Decline and Escape go back as MCP says (`decline`, `cancel`). Only what
 * the person typed or picked is sent, and never one of Model Gateway's own credentials. A URL
 * request opens the page only after the person says so.
 */
export class McpElicitation {
  constructor(
    private readonly services: InteractiveFeature & CredentialSource,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  async handle(server: string, params: ElicitParams, signal: AbortSignal): Promise<ElicitResult> {
    const result = params.mode === 'url' ? await this.url(server, params, signal) : await this.form(server, params, signal);
    this.log.info(`[${server}] elicitation: ${signal.aborted ? 'cancelled by the server' : result.action}`);
    return signal.aborted ? CANCEL : result;
  }

  private async url(server: string, p: ElicitParams, signal: AbortSignal): Promise<ElicitResult> {
    let url: URL;
    try {
      url = new URL(p.url ?? '');
    } catch {
      throw new (loadMcpSdk().McpError)(-32602, 'the URL to open is not valid');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new (loadMcpSdk().McpError)(-32602, `a ${url.protocol} URL is not opened`);
    const decline = vscode.l10n.t('Decline');
    const answer = await this.services.prompts.choose(
      vscode.l10n.t('The MCP server "{0}" asks you to open a page on {1}.', server, url.host),
      vscode.l10n.t('{0}\n\n{1}\n\nOpen it only if you expected this request: the page belongs to that site, not to Model Gateway.', p.message, url.toString()),
      [vscode.l10n.t('Open'), decline],
    );
    if (answer === undefined || signal.aborted) return CANCEL;
    if (answer === decline) return { action: 'decline' };
    await vscode.env.openExternal(vscode.Uri.parse(url.toString()));
    return { action: 'accept' };
  }

  private async form(server: string, p: ElicitParams, signal: AbortSignal): Promise<ElicitResult> {
    let fields: Field[];
    try {
      fields = fieldsOf(p.requestedSchema);
    } catch (err) {
      throw new (loadMcpSdk().McpError)(-32602, err instanceof Error ? err.message : String(err));
    }
    const secretish = fields.filter(asksForSecret);
    const warning = secretish.length
      ? ` ${vscode.l10n.t("It asks for {0}: never type a password, key or token into a server's form (MCP does not allow servers to ask for them).", secretish.map((f) => f.label).join(', '))}`
      : '';
    const decline = vscode.l10n.t('Decline');
    const answer = await this.services.prompts.choose(
      vscode.l10n.t('The MCP server "{0}" asks you: {1}', server, p.message),
      `${fields.length ? vscode.l10n.t('It asks for: {0}. Your answers go to this server only.', formSummary(fields)) : vscode.l10n.t('It asks for no fields: answering only says yes. Your answers go to this server only.')}${warning}`,
      [vscode.l10n.t('Answer…'), decline],
    );
    if (answer === undefined || signal.aborted) return CANCEL;
    if (answer === decline) return { action: 'decline' };
    const content: Record<string, Value> = {};
    for (const [i, f] of fields.entries()) {
      const title = `${server}: ${f.label} (${i + 1} of ${fields.length})`;
      const value = await this.ask(f, title);
      if (value === CANCELLED || signal.aborted) return CANCEL;
      if (value !== undefined) content[f.key] = value;
    }
    return { action: 'accept', content };
  }

  /** One field's answer; undefined when left empty, CANCELLED on Escape. */
  private async ask(f: Field, title: string): Promise<Value | undefined | typeof CANCELLED> {
    const prompts = this.services.prompts;
    const about = f.description ? `${f.description}${f.required ? '' : ' (optional)'}` : f.required ? f.label : `${f.label} (optional)`;
    if (f.kind === 'text' || f.kind === 'number') {
      const typed = await prompts.input({
        title,
        prompt: about,
        value: defaultText(f),
        password: asksForSecret(f),
        ignoreFocusOut: true,
        validateInput: (v) => problemWith(f, v) ?? this.credentialProblem(v),
      });
      return typed === undefined ? CANCELLED : valueOf(f, typed);
    }
    if (f.kind === 'boolean') {
      const items = [
        { label: vscode.l10n.t('Yes'), value: true },
        { label: vscode.l10n.t('No'), value: false },
      ];
      if (f.default === false) items.reverse();
      const picked = await prompts.pick([...items, ...(f.required ? [] : [{ label: leaveEmpty(), value: undefined }])], {
        title,
        placeHolder: about,
        ignoreFocusOut: true,
      });
      return picked === undefined ? CANCELLED : picked.value;
    }
    if (f.kind === 'choice') {
      const items = f.options.map((o) => ({ label: o.label, description: o.value !== o.label ? o.value : undefined, value: o.value }));
      const first = items.findIndex((i) => i.value === f.default);
      if (first > 0) items.unshift(...items.splice(first, 1));
      const picked = await prompts.pick([...items, ...(f.required ? [] : [{ label: leaveEmpty(), description: undefined, value: undefined }])], {
        title,
        placeHolder: about,
        ignoreFocusOut: true,
      });
      return picked === undefined ? CANCELLED : picked.value;
    }
    let note = '';
    for (;;) {
      const items = f.options.map((o) => ({
        label: o.label,
        description: o.value !== o.label ? o.value : undefined,
        picked: f.default?.includes(o.value) ?? false,
        value: o.value,
      }));
      const picked = await prompts.pickMany(items, { title: `${title}${note}`, placeHolder: about, ignoreFocusOut: true });
      if (picked === undefined) return CANCELLED;
      const n = picked.length;
      if (n === 0 && !f.required) return undefined;
      if (f.minItems !== undefined && n < f.minItems) note = `: pick at least ${f.minItems}`;
      else if (f.maxItems !== undefined && n > f.maxItems) note = `: pick at most ${f.maxItems}`;
      else return picked.map((i) => i.value);
    }
  }

  private credentialProblem(typed: string): string | undefined {
    const value = typed.trim();
    return value && this.services.credentials.values().includes(value)
      ? vscode.l10n.t('That is your Model Gateway credential: it is never given to an MCP server.')
      : undefined;
  }
}

const CANCELLED = Symbol('cancelled');
