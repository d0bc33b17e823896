import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { authorize, keyFromRequest, type AuthResult } from './auth';
import { handleChatCompletions } from './chat-completions';
import { Clock } from './clock';
import { BUSY_REASONS, Faults, quietFor, type Fault, type FaultRule } from './faults';
import { busyRulesFromEnv, sendBusy } from './busy';
import { handleResponses, handleResponsesCompact } from './responses';
import { handleGemini, handleGeminiModels } from './gemini';
import { fillTheMiddle, handleCompletions } from './fim';
import { handleMessages } from './messages';
import { findModel, MODELS, type EmulatedModel, type ModelKind } from './models';
import { PromptCache } from './prompt-cache';
import { AutomaticCache } from './auto-cache';
import { DEMO_ACCESS_TOKEN, DEMO_KEY, Store } from './store';
import { handleAccount } from './account';
import { handleBilling, handlePricing } from './usage';
import { PROFILE_RULES, isProfile, profileFromEnv, type ServerProfile } from './profiles';
import { handleSpeech, handleTranscription } from './audio';
import { ImageStudio, serveImage } from './imagegen';
import { handleEmbeddings, handleModerations, handleRerank } from './text-endpoints';
import { handleUnifiedVideo, handleUnifiedVideoCreate, handleVideo, handleVideoCreate, type VideoTaskState } from './videos';
import { handleMjFetch, handleMjSubmit, handleSunoFetch, handleSunoSubmit, serveMjImage, serveTaskAudio, type EmuTask } from './tasks';
import { asText } from './values';
import { StorageOrigin } from './storage';
import { closeNow } from './net';
import { ModelRateLimiter, type ModelRateLimit } from './rate-limit';
import { DEFAULT_PLANS, type CheckinSetting, type EmuPlan, type EmuSubscription } from './wallet';

export interface RecordedRequest {
  method: string;
  path: string;
  /** The query string, `?` included ('' when none). */
  search: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  at: number;
  /** The client went away before the answer was complete (an aborted request). */
  aborted?: boolean;
  /** The raw body's SHA-256 (a request sent again byte for byte has the same). */
  bodyHash: string;
  /** The answer's status, once its head went out; unset when none did (a reset, a client gone first). */
  status?: number;
}

export interface Ctx {
  emu: GatewayEmulator;
  req: IncomingMessage;
  res: ServerResponse;
  path: string;
  query: URLSearchParams;
  body: unknown;
  faults: Fault[];
  remoteIp: string;
}

type Handler = (ctx: Ctx, params: string[]) => Promise<void> | void;

const MAX_BODY = 64 * 1024 * 1024;

/** Parses a multipart body with the platform's own parser. */
export async function parseForm(ctx: Ctx): Promise<globalThis.FormData | undefined> {
  const type = asText(ctx.req.headers['content-type']);
  if (!type.startsWith('multipart/form-data') || !Buffer.isBuffer(ctx.body)) return undefined;
  try {
    return await new Request('http://emulator/', { method: 'POST', headers: { 'content-type': type }, body: ctx.body }).formData();
  } catch {
    return undefined;
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** The chat-completions style error: `{error:{message,type,code}}`. */
export function openAiError(res: ServerResponse, status: number, message: string, type = 'invalid_request_error', code: string | null = null): void {
  sendJson(res, status, { error: { message, type, param: null, code } });
}

const CLAUDE_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  503: 'overloaded_error',
};

/** The messages-format error: `{type:"error",error:{type,message}}`. */
export function claudeError(res: ServerResponse, status: number, message: string, type?: string): void {
  sendJson(res, status, { type: 'error', error: { type: type ?? CLAUDE_TYPES[status] ?? 'api_error', message }, request_id: null });
}

/** The model a request names: its JSON body's `model`, or Gemini's in the path. */
export function requestModel(path: string, body: unknown): string | undefined {
  const gemini = /^\/v1beta\/models\/([^/:]+):/.exec(path);
  if (gemini) return decodeURIComponent(gemini[1]);
  if (body && typeof body === 'object' && !Buffer.isBuffer(body)) {
    const model = (body as Record<string, unknown>).model;
    if (typeof model === 'string') return model;
  }
  return undefined;
}

function isStreamed(path: string, body: unknown): boolean {
  if (path.endsWith(':streamGenerateContent')) return true;
  return !!body && typeof body === 'object' && !Buffer.isBuffer(body) && (body as Record<string, unknown>).stream === true;
}

/** What is wrong with a fault rule sent to the control API (a typo would otherwise be silently ignored). */
function faultRuleProblem(b: Record<string, unknown>): string | undefined {
  const f = b.fault as Record<string, unknown> | undefined;
  if (!f || typeof f !== 'object' || typeof f.kind !== 'string') return 'fault.kind is required';
  if (b.model !== undefined && typeof b.model !== 'string') return 'model must be a string';
  if (f.kind === 'busy' && !(BUSY_REASONS as readonly unknown[]).includes(f.reason)) return `fault.reason must be one of ${BUSY_REASONS.join(', ')}`;
  if (f.kind === 'stall' && !(typeof f.afterEvents === 'number' && f.afterEvents >= 0)) return 'fault.afterEvents must be a number (0 or more)';
  return undefined;
}

export class GatewayEmulator {
  readonly clock = new Clock();
  readonly store = new Store(this.clock);
  readonly faults = new Faults();
  /** What `/v1/completions` puts at the cursor (a benchmark may give a model stand-in that knows its file). */
  codeModel: (prefix: string, suffix: string) => string = fillTheMiddle;
  readonly cache = new PromptCache(this.clock);
  /** OpenAI's automatic prefix cache on chat completions and responses. */
  readonly automaticCache = new AutomaticCache();
  readonly requests: RecordedRequest[] = [];
  /** Streams whose client went away before the stream ended (aborts, cuts). */
  clientClosedStreams = 0;
  readonly stats = { embeddingRequests: 0, embeddedInputs: 0 };
  readonly videos = new Map<string, VideoTaskState>();
  /** A new-api release before `/v1/videos`: only `/v1/video/generations` (the others answer 404). */
  olderVideoRoutes = false;
  /** Whether `/v1/responses/compact` is served (new-api releases before it answer 404). */
  offersCompaction = true;
  /** new-api's music (Suno) and Midjourney tasks. */
  readonly tasks = new Map<string, EmuTask>();
  readonly studio = new ImageStudio(() => this.url);
  /** Where downloads are redirected when `redirectDownloads` is on (real gateways use storage). */
  readonly storage = new StorageOrigin();
  /** Answer downloads (video content, image results) with a 302 to the storage origin. */
  redirectDownloads = process.env.MODEL_GATEWAY_EMULATOR_REDIRECTS === '1';
  /** Which real server the emulator behaves like; switchable on a running emulator. */
  profile: ServerProfile = profileFromEnv();
  private server: Server | undefined;
  private rateLimiter: ModelRateLimiter | undefined;
  /** new-api's check-in setting (off by default, as there). */
  checkin: CheckinSetting = { enabled: false, minQuota: 100_000, maxQuota: 400_000 };
  /** new-api's subscription plans and the users' subscriptions. */
  readonly plans: EmuPlan[] = DEFAULT_PLANS.map((p) => ({ ...p }));
  readonly subscriptions: EmuSubscription[] = [];
  private readonly routes: { method: string; path: RegExp; handler: Handler }[] = [];
  url = '';

  static readonly demoKey = DEMO_KEY;
  static readonly demoAccessToken = DEMO_ACCESS_TOKEN;
  /** The demo user's id (new-api's `New-Api-User`). */
  static readonly demoUserId = 1;

  constructor() {
    const route = (method: string, path: string | RegExp, handler: Handler) =>
      this.routes.push({ method, path: typeof path === 'string' ? new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : path, handler });
    route('GET', '/v1/models', (ctx) => this.listModels(ctx));
    route('POST', '/v1/chat/completions', handleChatCompletions);
    route('POST', '/v1/messages', handleMessages);
    route('POST', '/v1/responses', handleResponses);
    route('POST', '/v1/responses/compact', handleResponsesCompact);
    route('GET', '/v1beta/models', handleGeminiModels);
    route('POST', /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/, (ctx, [model, action]) =>
      handleGemini(ctx, decodeURIComponent(model), action === 'streamGenerateContent'),
    );
    route('POST', '/v1/completions', handleCompletions);
    route('POST', '/v1/embeddings', handleEmbeddings);
    route('POST', '/v1/rerank', handleRerank);
    route('POST', '/v1/moderations', handleModerations);
    route('POST', '/v1/audio/speech', handleSpeech);
    route('POST', '/v1/audio/transcriptions', handleTranscription('transcribe'));
    route('POST', '/v1/audio/translations', handleTranscription('translate'));
    route('POST', '/v1/videos', (ctx) =>
      this.olderVideoRoutes ? openAiError(ctx.res, 404, `Invalid URL (POST ${ctx.path})`, 'invalid_request_error', '') : handleVideoCreate(ctx),
    );
    route('*', /^\/v1\/videos\/([^/]+)(?:\/(content))?$/, (ctx, [id, sub]) =>
      this.olderVideoRoutes ? openAiError(ctx.res, 404, `Invalid URL (${ctx.req.method} ${ctx.path})`, 'invalid_request_error', '') : handleVideo(ctx, id, sub),
    );
    route('POST', '/v1/video/generations', handleUnifiedVideoCreate);
    route('GET', /^\/v1\/video\/generations\/([^/]+)$/, (ctx, [id]) => handleUnifiedVideo(ctx, decodeURIComponent(id)));
    route('POST', /^\/suno\/submit\/([^/]+)$/, (ctx, [action]) => handleSunoSubmit(ctx, action));
    route('POST', '/suno/fetch', (ctx) => handleSunoFetch(ctx, undefined));
    route('GET', /^\/suno\/fetch\/([^/]+)$/, (ctx, [id]) => handleSunoFetch(ctx, decodeURIComponent(id)));
    route('GET', /^\/emu-audio\/([\w-]+)\.(mp3|png)$/, (ctx, [name, ext]) => serveTaskAudio(ctx, name, ext));
    route('POST', /^\/mj\/submit\/([\w-]+)$/, (ctx, [what]) => handleMjSubmit(ctx, what));
    route('GET', /^\/mj\/task\/([^/]+)\/fetch$/, (ctx, [id]) => handleMjFetch(ctx, decodeURIComponent(id)));
    route('GET', /^\/mj\/image\/([^/]+)$/, (ctx, [id]) => serveMjImage(ctx, decodeURIComponent(id)));
    route('POST', /^\/imagegen\/v1\/imagegen-v3\/(generate|remix|edit|replace-background)$/, (ctx, [op]) => this.studio.handle(ctx, op, false));
    route('POST', /^\/imagegen\/(generate|edit|remix|upscale|describe)$/, (ctx, [op]) => this.studio.handle(ctx, op, true));
    route('GET', /^\/emu-images\/([0-9a-f]+)\.png$/, (ctx, [id]) => serveImage(ctx, this.studio, id));
    route('GET', '/api/pricing', handlePricing);
    route('GET', /^(?:\/v1)?\/dashboard\/billing\/(subscription|usage)$/, (ctx, [which]) => handleBilling(ctx, which as 'subscription' | 'usage'));
    route('*', /^\/api\//, handleAccount);
  }

  /**
   * `historyDays`: bill that many days of past usage to the demo user first (demos, the usage
   * view's tests). `busy`: fault rules to start with (by default those of `MODEL_GATEWAY_EMULATOR_BUSY`).
   */
  static async start(
    options: { port?: number; host?: string; profile?: ServerProfile; historyDays?: number; busy?: FaultRule[] } = {},
  ): Promise<GatewayEmulator> {
    const emu = new GatewayEmulator();
    if (options.profile) emu.profile = options.profile;
    if (options.historyDays) emu.store.seedHistory(GatewayEmulator.demoUserId, options.historyDays);
    // A demo may start with a busy model (`MODEL_GATEWAY_EMULATOR_BUSY=claude-sonnet-emu=no-channel`).
    for (const rule of options.busy ?? busyRulesFromEnv()) emu.faults.add(rule);
    await emu.storage.start();
    await emu.listen(options.port ?? 0, options.host ?? '127.0.0.1');
    return emu;
  }

  async listen(port: number, host: string): Promise<void> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        if (!res.headersSent) openAiError(res, 500, `Emulator failure: ${String(err)}`, 'server_error');
        else res.destroy();
      });
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    const addr = server.address() as AddressInfo;
    this.url = `http://${host}:${addr.port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await closeNow(server);
    await this.storage.close();
  }

  /** Sends a download: the bytes, or a 302 to a signed storage URL in redirect mode. */
  sendDownload(res: ServerResponse, bytes: Buffer, type: string, name: string): void {
    if (this.redirectDownloads) {
      res.writeHead(302, { location: this.storage.put(bytes, type, name), 'content-length': 0 });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': type, 'content-length': bytes.length });
    res.end(bytes);
  }

  /** Switches a fault on for the next matching request(s). */
  inject(rule: FaultRule): void {
    this.faults.add(rule);
  }

  /** Requests recorded so far for a path (all when none given). */
  requestsTo(path?: string): RecordedRequest[] {
    return path ? this.requests.filter((r) => r.path === path) : this.requests;
  }

  /** Applies the spec's key rules for an interface, answering the error itself when they fail. */
  authorize(ctx: Ctx, header: 'bearer' | 'x-api-key' | 'api-key' | 'goog', model: EmulatedModel | undefined, format: 'openai' | 'claude'): AuthResult {
    const result = authorize(this.store, this.clock, keyFromRequest(ctx.req, header), ctx.remoteIp, model);
    if (!result.ok) {
      // The gateway's own auth failures keep its chat-completions shape, on /v1/messages too.
      const type = PROFILE_RULES[this.profile].errorType;
      if (format === 'claude' && this.profile !== 'new-api') claudeError(ctx.res, result.status, result.message);
      else openAiError(ctx.res, result.status, result.message, type, result.code);
      return result;
    }
    // new-api's relay routes run its model rate limit after the key's check (not the dashboard's).
    const relayed = ctx.req.method === 'POST' && !ctx.path.includes('/dashboard/');
    if (relayed && this.profile === 'new-api' && this.rateLimiter && !this.rateLimiter.admit(result.user.id, ctx.res)) {
      return { ok: false, status: 429, message: 'rate limited', code: 'rate_limited' };
    }
    // A busy model: after the key's check, where the servers' limiter, distributor and relay run.
    const busy = relayed ? ctx.faults.find((f): f is Extract<Fault, { kind: 'busy' }> => f.kind === 'busy') : undefined;
    if (busy) {
      const id = model?.id ?? requestModel(ctx.path, ctx.body) ?? '';
      sendBusy(busy, { res: ctx.res, profile: this.profile, format, model: id, acceptLanguage: asText(ctx.req.headers['accept-language']) });
      return { ok: false, status: ctx.res.statusCode, message: `busy: ${busy.reason}`, code: 'busy' };
    }
    return result;
  }

  /** new-api's model request rate limit (an operator's setting; off unless a test turns it on). */
  setModelRateLimit(limit: ModelRateLimit | undefined): void {
    this.rateLimiter = limit ? new ModelRateLimiter(limit, this.clock) : undefined;
  }

  /**
   * The common start of a JSON endpoint with a key: a body object, a model of the right kind, and
   * a key allowed to use it. Answers the error itself and returns undefined when one fails.
   */
  beginJson(
    ctx: Ctx,
    kind: ModelKind,
    defaultModel?: string,
  ): { body: Record<string, unknown>; model: EmulatedModel; auth: Extract<AuthResult, { ok: true }> } | undefined {
    const body = ctx.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object' || Buffer.isBuffer(body)) {
      openAiError(ctx.res, 400, 'The request body must be a JSON object.', 'invalid_request_error', 'invalid_parameter');
      return undefined;
    }
    const model = this.requireModel(ctx, body.model ?? defaultModel, 'openai', kind);
    if (!model) return undefined;
    const auth = this.authorize(ctx, 'bearer', model, 'openai');
    return auth.ok ? { body, model, auth } : undefined;
  }

  /** Unknown model ids get 503, as the spec says (case matters). */
  requireModel(ctx: Ctx, id: unknown, format: 'openai' | 'claude', kind: ModelKind = 'chat'): EmulatedModel | undefined {
    if (typeof id !== 'string' || id.length === 0) {
      if (format === 'claude') claudeError(ctx.res, 400, 'model: field required');
      else openAiError(ctx.res, 400, 'model is required', 'invalid_request_error', 'invalid_parameter');
      return undefined;
    }
    const model = findModel(id);
    if (!model) {
      const message = `No available channel for model ${id} (model ids are case-sensitive).`;
      if (format === 'claude' && this.profile !== 'new-api') claudeError(ctx.res, 503, message, 'api_error');
      else openAiError(ctx.res, 503, message, PROFILE_RULES[this.profile].errorType, 'model_not_found');
      return undefined;
    }
    if (model.kind !== kind) {
      const message = `Model ${id} is a ${model.kind} model and cannot serve ${ctx.path}.`;
      if (format === 'claude') claudeError(ctx.res, 400, message);
      else openAiError(ctx.res, 400, message, 'invalid_request_error', 'invalid_parameter');
      return undefined;
    }
    return model;
  }

  private listModels(ctx: Ctx): void {
    const auth = this.authorize(ctx, 'bearer', undefined, 'openai');
    if (!auth.ok) return;
    const allowed = auth.key.models;
    const data = MODELS.filter((m) => !allowed || allowed.includes(m.id)).map((m) => ({
      id: m.id,
      object: 'model',
      created: 1_700_000_000,
      owned_by: m.ownedBy,
    }));
    sendJson(ctx.res, 200, { object: 'list', success: true, data });
  }

  private async readBody(req: IncomingMessage): Promise<Buffer | undefined> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY) return undefined;
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const raw = await this.readBody(req);
    if (raw === undefined) return openAiError(res, 413, 'Request body too large.', 'invalid_request_error', 'request_too_large');
    let body: unknown;
    // Content-Type is optional on JSON endpoints (the spec says so for chat completions), so any
    // body that is not multipart and opens like JSON is read as JSON.
    const type = asText(req.headers['content-type']);
    const first = raw.length > 0 ? raw.toString('utf8', 0, Math.min(raw.length, 64)).trimStart()[0] : undefined;
    // An empty body is no body, whatever its Content-Type says: one-api's and new-api's router
    // (gin) reads nothing for a GET or a bodiless POST; only a handler that binds a body refuses it.
    if (raw.length > 0 && !type.startsWith('multipart/') && (first === '{' || first === '[' || /json/.test(type))) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return openAiError(res, 400, 'The request body is not valid JSON.', 'invalid_request_error', 'invalid_json');
      }
    } else if (raw.length > 0) {
      body = raw;
    }

    if (path.startsWith('/__emulator/')) return this.control(path, body, res);

    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      search: url.search,
      headers: req.headers,
      body,
      at: this.clock.now(),
      bodyHash: createHash('sha256').update(raw).digest('hex'),
    };
    this.requests.push(record);
    res.once('close', () => {
      if (!res.writableFinished) record.aborted = true;
      if (res.headersSent) record.status = res.statusCode;
    });
    const faults = this.faults.take(path, requestModel(path, body));
    if (faults.some((f) => f.kind === 'reset')) {
      req.socket.destroy();
      return;
    }
    // A slow first byte applies to every route (streams wait in the same place, before their head).
    const slow = faults.find((f): f is Extract<Fault, { kind: 'slowFirstByte' }> => f.kind === 'slowFirstByte');
    if (slow) await new Promise((r) => setTimeout(r, slow.ms));
    const model = faults.find((f): f is Extract<Fault, { kind: 'modelLatency' }> => f.kind === 'modelLatency');
    if (model) await new Promise((r) => setTimeout(r, model.firstByteMs + (raw.length / 4 / 1000) * model.msPer1kPromptTokens));
    if (res.destroyed) return;
    const status = faults.find((f): f is Extract<Fault, { kind: 'status' }> => f.kind === 'status');
    if (status) return this.sendStatusFault(res, path, status);
    // A stall on a request that is not streamed: no byte at all for as long.
    const stall = faults.find((f): f is Extract<Fault, { kind: 'stall' }> => f.kind === 'stall');
    if (stall && !isStreamed(path, body)) {
      await quietFor(res, stall.ms);
      if (res.destroyed) return;
    }

    for (const r of this.routes) {
      if (r.method !== '*' && r.method !== req.method) continue;
      const m = r.path.exec(path);
      if (!m) continue;
      await r.handler({ emu: this, req, res, path, query: url.searchParams, body, faults, remoteIp: req.socket.remoteAddress ?? '' }, m.slice(1));
      return;
    }
    openAiError(res, 404, `No route for ${req.method} ${path}.`, 'invalid_request_error', 'not_found');
  }

  private sendStatusFault(res: ServerResponse, path: string, f: Extract<Fault, { kind: 'status' }>): void {
    const headers: Record<string, string> = {};
    if (f.retryAfter !== undefined) headers['retry-after'] = f.retryAfter;
    if (f.retryAfterMs !== undefined) headers['retry-after-ms'] = String(f.retryAfterMs);
    if (f.body !== undefined) {
      const text = typeof f.body === 'string' ? f.body : JSON.stringify(f.body);
      res.writeHead(f.status, { 'content-type': typeof f.body === 'string' ? 'text/plain' : 'application/json', ...headers });
      res.end(text);
      return;
    }
    const message = f.message ?? (f.status === 429 ? 'Too many requests, please slow down.' : `Injected HTTP ${f.status}.`);
    const body = path.startsWith('/api/')
      ? { success: false, message }
      : path === '/v1/messages'
        ? { type: 'error', error: { type: CLAUDE_TYPES[f.status] ?? 'api_error', message } }
        : { error: { message, type: f.status === 429 ? 'rate_limit_error' : 'upstream_error', code: null } };
    sendJson(res, f.status, body, headers);
  }

  /** Control API for a separately running emulator (faults, clock, request log). */
  private control(path: string, body: unknown, res: ServerResponse): void {
    const b = (body ?? {}) as Record<string, unknown>;
    switch (path) {
      case '/__emulator/faults': {
        // `{ clear: true }` takes every fault off and keeps the request log; `{ clear: true, model }`
        // only that model's.
        if (b.clear === true) {
          this.faults.clear(typeof b.model === 'string' ? b.model : undefined);
          return sendJson(res, 200, { ok: true });
        }
        const problem = faultRuleProblem(b);
        if (problem) return openAiError(res, 400, problem);
        this.faults.add(b as unknown as FaultRule);
        return sendJson(res, 200, { ok: true });
      }
      case '/__emulator/faults/list':
        // The active rules (GET or POST), each with its uses left (`times` null: until cleared).
        return sendJson(res, 200, { rules: this.faults.list() });
      case '/__emulator/clock':
        this.clock.advance(Number(b.advanceMs ?? 0));
        return sendJson(res, 200, { now: this.clock.now() });
      case '/__emulator/requests':
        // With each request's top-level body fields (names only: no values, no credentials).
        return sendJson(res, 200, {
          count: this.requests.length,
          paths: this.requests.map((r) => `${r.method} ${r.path}`),
          fields: this.requests.map((r) => (r.body && typeof r.body === 'object' && !Buffer.isBuffer(r.body) ? Object.keys(r.body) : [])),
        });
      case '/__emulator/answered': {
        // Each request whose answer's head went out: its path, status and body hash (a client that
        // sends a request again after its answer began pays twice; hashes show whether it did).
        const answered = this.requests.filter((r) => r.status !== undefined && (!b.path || r.path === b.path));
        return sendJson(res, 200, { requests: answered.map((r) => ({ path: r.path, status: r.status, bodyHash: r.bodyHash, aborted: r.aborted === true })) });
      }
      case '/__emulator/billing': {
        // The consume log's sums for a user (the demo user by default), from `since` (Unix seconds).
        const userId = Number(b.userId ?? GatewayEmulator.demoUserId);
        const since = Number(b.since ?? 0);
        const logs = this.store.logs.filter((l) => l.userId === userId && l.createdAt >= since);
        return sendJson(res, 200, {
          calls: logs.length,
          quota: logs.reduce((n, l) => n + l.quota, 0),
          promptTokens: logs.reduce((n, l) => n + l.promptTokens, 0),
          completionTokens: logs.reduce((n, l) => n + l.completionTokens, 0),
        });
      }
      case '/__emulator/last-request': {
        // The newest request to a path, credential headers blanked (tests must never read keys back).
        const r = [...this.requests].reverse().find((q) => !b.path || q.path === b.path);
        if (!r) return sendJson(res, 404, { error: { message: 'no such request' } });
        const hidden = new Set(['authorization', 'x-api-key', 'api-key']);
        const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, hidden.has(k) ? '(set)' : v]));
        return sendJson(res, 200, { method: r.method, path: r.path, headers, body: Buffer.isBuffer(r.body) ? null : r.body });
      }
      case '/__emulator/history': {
        // Past usage for the demo user (npm start, the usage e2e): billed, so the balance agrees.
        const calls = this.store.seedHistory(GatewayEmulator.demoUserId, Math.min(60, Math.max(1, Number(b.days ?? 14))));
        return sendJson(res, 200, { calls });
      }
      case '/__emulator/rate-limit':
        // `{minutes, total, success}` turns new-api's model rate limit on; `{}` turns it off.
        this.setModelRateLimit(
          typeof b.minutes === 'number' ? { minutes: b.minutes, total: Number(b.total ?? 0), success: Number(b.success ?? 1000) } : undefined,
        );
        return sendJson(res, 200, { ok: true });
      case '/__emulator/redemption': {
        // `{code, dollars}` adds an unused redemption code (an operator's batch of one).
        const code = typeof b.code === 'string' ? b.code : '';
        if (!code) return openAiError(res, 400, 'code is required');
        this.store.redemptions.set(code, { quota: Math.round(Number(b.dollars ?? 1) * 500_000), status: 1 });
        return sendJson(res, 200, { ok: true });
      }
      case '/__emulator/checkin':
        // `{enabled, minQuota, maxQuota}`: the operator's check-in setting (new-api).
        this.checkin = { ...this.checkin, ...(b as Partial<CheckinSetting>) };
        return sendJson(res, 200, this.checkin);
      case '/__emulator/subscribe': {
        // `{planId, days, usedDollars}` gives the demo user a subscription to a plan.
        const plan = this.plans.find((p) => p.id === Number(b.planId ?? 1));
        if (!plan) return openAiError(res, 400, 'no such plan');
        const now = Math.floor(this.clock.now() / 1000);
        this.subscriptions.push({
          id: this.subscriptions.length + 1,
          userId: GatewayEmulator.demoUserId,
          planId: plan.id,
          amountTotal: plan.total_amount,
          amountUsed: Math.round(Number(b.usedDollars ?? 0) * 500_000),
          startTime: now,
          endTime: now + Number(b.days ?? 30) * 86_400,
          status: 'active',
        });
        return sendJson(res, 200, { ok: true });
      }
      case '/__emulator/reset':
        this.faults.clear();
        this.requests.length = 0;
        return sendJson(res, 200, { ok: true });
      case '/__emulator/redirects':
        if (typeof b.on === 'boolean') this.redirectDownloads = b.on;
        return sendJson(res, 200, { on: this.redirectDownloads, storage: this.storage.url, leaks: this.storage.credentialLeaks, served: this.storage.served });
      case '/__emulator/profile':
        if (b.profile !== undefined) {
          if (!isProfile(b.profile)) return openAiError(res, 400, `profile must be one of ${Object.keys(PROFILE_RULES).join(', ')}.`);
          this.profile = b.profile;
        }
        return sendJson(res, 200, { profile: this.profile });
      default:
        return openAiError(res, 404, `No control route ${path}.`);
    }
  }
}
