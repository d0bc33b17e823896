import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { busyRulesFromEnv } from '../emulator/busy';
import { stallsWaiting, type FaultRule } from '../emulator/faults';
import type { ServerProfile } from '../emulator/profiles';
import { GatewayEmulator } from '../emulator/server';
import { useEmulator } from './helpers';

/**
 * Per-model busy faults and stalls, on the real servers' bodies (test/emulator/busy.ts cites
 * where each comes from). Each case sets the profile it checks, so the file runs in one pass.
 */
describe('gateway emulator: busy models and stalls', () => {
  const ctx = useEmulator();
  const key = GatewayEmulator.demoKey;

  interface Answer {
    status: number;
    headers: Headers;
    json: Record<string, unknown>;
  }

  const chat = (model: string, extra: Record<string, unknown> = {}) => ({
    path: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content: 'hello' }], ...extra },
  });
  const messages = (model: string, extra: Record<string, unknown> = {}) => ({
    path: '/v1/messages',
    body: { model, max_tokens: 100, messages: [{ role: 'user', content: 'hello' }], ...extra },
  });
  const responses = (model: string) => ({ path: '/v1/responses', body: { model, input: 'hello' } });
  const gemini = (model: string) => ({ path: `/v1beta/models/${model}:generateContent`, body: { contents: [{ role: 'user', parts: [{ text: 'hello' }] }] } });
  const completions = (model: string) => ({ path: '/v1/completions', body: { model, prompt: 'const x = ', max_tokens: 16 } });

  async function send(r: { path: string; body: unknown }, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await fetch(`${ctx.emu.url}${r.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-goog-api-key': key, ...headers },
      body: JSON.stringify(r.body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: JSON.parse(text) as Record<string, unknown> };
  }

  const control = async (path: string, body?: unknown) =>
    await fetch(`${ctx.emu.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  function busy(profile: ServerProfile, model: string, fault: FaultRule['fault'], times: number | null = 1): void {
    ctx.emu.profile = profile;
    ctx.emu.faults.add({ model, times, fault });
  }

  /** The request id a gateway put in the message, which its `X-Oneapi-Request-Id` header repeats. */
  function requestIdOf(a: Answer, message: string): string {
    const m = / \(request id: (\w+)\)$/.exec(message);
    assert.ok(m, `the message ends with the request id: ${message}`);
    assert.equal(a.headers.get('x-oneapi-request-id'), m[1]);
    return m[1];
  }

  afterEach(() => {
    ctx.emu.faults.clear();
    ctx.emu.profile = 'new-api';
  });

  describe('new-api', () => {
    it('rate-limit: its model limiter, 429 in the OpenAI shape with no Retry-After, on every route', async () => {
      for (const r of [chat('gpt-4o-mini'), messages('claude-sonnet-emu'), responses('gpt-4o'), gemini('gpt-4o-mini'), completions('codestral-emu')]) {
        const model = (r.body as { model?: string }).model ?? 'gpt-4o-mini';
        busy('new-api', model, { kind: 'busy', reason: 'rate-limit' });
        const a = await send(r);
        assert.equal(a.status, 429, r.path);
        const error = a.json.error as Record<string, unknown>;
        assert.deepEqual(Object.keys(a.json), ['error'], r.path);
        assert.deepEqual(Object.keys(error), ['message', 'type', 'code']);
        assert.equal(error.type, 'new_api_error');
        assert.equal(error.code, '');
        assert.match(String(error.message), /^您已达到请求数限制：1分钟内最多请求3次 \(request id: \w+\)$/);
        requestIdOf(a, String(error.message));
        assert.equal(a.headers.get('retry-after'), null, 'new-api sends no Retry-After');
      }
    });

    it('rate-limit names the window and count it is given', async () => {
      busy('new-api', 'gpt-4o', { kind: 'busy', reason: 'rate-limit', minutes: 5, count: 20 });
      const a = await send(chat('gpt-4o'));
      assert.match(String((a.json.error as { message: string }).message), /^您已达到请求数限制：5分钟内最多请求20次 \(request id/);
    });

    it('rate-limit with retryAfter: an upstream 429 relayed, with the header', async () => {
      busy('new-api', 'gpt-4o', { kind: 'busy', reason: 'rate-limit', retryAfter: 30 });
      const a = await send(chat('gpt-4o'));
      assert.equal(a.status, 429);
      assert.equal(a.headers.get('retry-after'), '30');
      assert.deepEqual(a.json, { error: { message: 'Rate limit reached for requests', type: 'requests', param: '', code: 'rate_limit_exceeded' } });

      // Anthropic's 429 through /v1/messages: ToClaudeError's type is the code printed with %v.
      busy('new-api', 'claude-sonnet-emu', { kind: 'busy', reason: 'rate-limit', retryAfter: 7 });
      const m = await send(messages('claude-sonnet-emu'));
      assert.equal(m.status, 429);
      assert.equal(m.headers.get('retry-after'), '7');
      const error = m.json.error as Record<string, unknown>;
      assert.equal(m.json.type, 'error');
      assert.equal(error.type, '<nil>');
      assert.match(String(error.message), /^Number of concurrent connections has exceeded your rate limit\. Please try again later\. \(request id: \w+\)$/);
    });

    it('no-channel: the distributor, 503 model_not_found, OpenAI shape on every route', async () => {
      for (const r of [chat('gpt-4o-mini'), messages('claude-sonnet-emu'), responses('gpt-4o'), gemini('gpt-4o-mini'), completions('codestral-emu')]) {
        const model = (r.body as { model?: string }).model ?? 'gpt-4o-mini';
        busy('new-api', model, { kind: 'busy', reason: 'no-channel' });
        const a = await send(r);
        assert.equal(a.status, 503, r.path);
        const error = a.json.error as Record<string, unknown>;
        assert.deepEqual(Object.keys(a.json), ['error'], r.path);
        assert.deepEqual(Object.keys(error), ['message', 'type', 'code']);
        assert.equal(error.type, 'new_api_error');
        assert.equal(error.code, 'model_not_found');
        const id = requestIdOf(a, String(error.message));
        assert.equal(error.message, `No available channel for model ${model} under group default (distributor) (request id: ${id})`);
      }
    });

    it('no-channel in Chinese when the client asks for it', async () => {
      busy('new-api', 'gpt-4o', { kind: 'busy', reason: 'no-channel' });
      const a = await send(chat('gpt-4o'), { 'accept-language': 'zh-CN,zh;q=0.9' });
      const message = String((a.json.error as { message: string }).message);
      assert.equal(message, `分组 default 下模型 gpt-4o 无可用渠道（distributor） (request id: ${requestIdOf(a, message)})`);
    });

    it('overloaded: the upstream 529 relayed, as each relay format writes it', async () => {
      busy('new-api', 'claude-sonnet-emu', { kind: 'busy', reason: 'overloaded' });
      const c = await send(chat('claude-sonnet-emu'));
      assert.equal(c.status, 529);
      assert.deepEqual(c.json, { error: { message: 'Overloaded', type: 'overloaded_error', param: '', code: null } });
      assert.equal(c.headers.get('retry-after'), null);

      busy('new-api', 'claude-sonnet-emu', { kind: 'busy', reason: 'overloaded' });
      const m = await send(messages('claude-sonnet-emu'));
      assert.equal(m.status, 529);
      assert.deepEqual(Object.keys(m.json), ['type', 'error']);
      const error = m.json.error as Record<string, unknown>;
      assert.deepEqual(error, { type: '<nil>', message: `Overloaded (request id: ${requestIdOf(m, String(error.message))})` });
    });
  });

  describe('one-api', () => {
    it('no-channel: its distributor, 503 one_api_error without a code, on chat and messages', async () => {
      for (const r of [chat('gpt-4o-mini'), messages('claude-haiku-emu'), completions('codestral-emu')]) {
        const model = (r.body as { model: string }).model;
        busy('one-api', model, { kind: 'busy', reason: 'no-channel' });
        const a = await send(r);
        assert.equal(a.status, 503, r.path);
        const error = a.json.error as Record<string, unknown>;
        assert.deepEqual(Object.keys(error), ['message', 'type']);
        assert.equal(error.type, 'one_api_error');
        const id = requestIdOf(a, String(error.message));
        assert.match(id, /^\d+$/, 'one-api request ids are digits');
        assert.equal(error.message, `当前分组 default 下对于模型 ${model} 无可用渠道 (request id: ${id})`);
      }
    });

    it('rate-limit: the upstream 429 after its retries, message rewritten, Retry-After only when asked', async () => {
      busy('one-api', 'gpt-4o', { kind: 'busy', reason: 'rate-limit' });
      const a = await send(chat('gpt-4o'));
      assert.equal(a.status, 429);
      assert.equal(a.headers.get('retry-after'), null);
      const error = a.json.error as Record<string, unknown>;
      const id = requestIdOf(a, String(error.message));
      assert.deepEqual(error, { message: `当前分组上游负载已饱和，请稍后再试 (request id: ${id})`, type: 'requests', param: '', code: 'rate_limit_exceeded' });

      busy('one-api', 'claude-sonnet-emu', { kind: 'busy', reason: 'rate-limit', retryAfter: 12 });
      const m = await send(messages('claude-sonnet-emu'));
      assert.equal(m.status, 429);
      assert.equal(m.headers.get('retry-after'), '12');
      const mError = m.json.error as Record<string, unknown>;
      assert.deepEqual(Object.keys(m.json), ['error']);
      assert.equal(mError.type, 'rate_limit_error');
      assert.equal(mError.code, null);
    });

    it('overloaded: the 529 and its message kept, with the request id', async () => {
      busy('one-api', 'claude-sonnet-emu', { kind: 'busy', reason: 'overloaded' });
      const a = await send(chat('claude-sonnet-emu'));
      assert.equal(a.status, 529);
      const error = a.json.error as Record<string, unknown>;
      const id = requestIdOf(a, String(error.message));
      assert.deepEqual(error, { message: `Overloaded (request id: ${id})`, type: 'overloaded_error', param: '', code: null });
    });

    it('routes one-api lacks answer their own 404, busy or not', async () => {
      busy('one-api', 'gpt-4o', { kind: 'busy', reason: 'no-channel' }, null);
      busy('one-api', 'gpt-4o-mini', { kind: 'busy', reason: 'no-channel' }, null);
      assert.equal((await send(responses('gpt-4o'))).status, 404);
      assert.equal((await send(gemini('gpt-4o-mini'))).status, 404);
    });
  });

  describe('the model filter', () => {
    it('makes one model busy while the others answer; times counts its requests only', async () => {
      busy('new-api', 'claude-sonnet-emu', { kind: 'busy', reason: 'no-channel' }, 2);
      assert.equal((await send(chat('gpt-4o-mini'))).status, 200, 'another model answers');
      assert.equal((await send(messages('claude-haiku-emu'))).status, 200);
      assert.equal((await send(messages('claude-sonnet-emu'))).status, 503);
      assert.equal((await send(chat('gpt-4o'))).status, 200);
      assert.equal((await send(chat('claude-sonnet-emu'))).status, 503);
      assert.equal((await send(messages('claude-sonnet-emu'))).status, 200, 'two uses, then it answers');
    });

    it('takes the model from the path on Gemini routes', async () => {
      busy('new-api', 'gpt-4o', { kind: 'busy', reason: 'overloaded' });
      assert.equal((await send(gemini('gpt-4o-mini'))).status, 200);
      assert.equal((await send(gemini('gpt-4o'))).status, 529);
    });

    it('works with after and path', async () => {
      ctx.emu.faults.add({ model: 'gpt-4o', path: '/v1/chat/completions', after: 1, fault: { kind: 'busy', reason: 'rate-limit' } });
      assert.equal((await send(responses('gpt-4o'))).status, 200, 'another path passes, and is not counted');
      assert.equal((await send(chat('gpt-4o'))).status, 200, 'the first is let through');
      assert.equal((await send(chat('gpt-4o'))).status, 429);
      assert.equal((await send(chat('gpt-4o'))).status, 200);
    });

    it('is switched on, listed and cleared per model over the control API', async () => {
      const on = (model: string, reason: string) => control('/__emulator/faults', { model, times: null, fault: { kind: 'busy', reason } });
      assert.equal((await on('claude-sonnet-emu', 'no-channel')).status, 200);
      assert.equal((await on('gpt-4o', 'overloaded')).status, 200);
      assert.equal((await on('gpt-4o', 'busyish')).status, 400, 'an unknown reason is refused');
      for (let i = 0; i < 3; i++) assert.equal((await send(messages('claude-sonnet-emu'))).status, 503, 'until cleared');
      assert.equal((await send(chat('gpt-4o-mini'))).status, 200);

      const listed = (await (await control('/__emulator/faults/list')).json()) as {
        rules: { model?: string; times: number | null; fault: { reason?: string } }[];
      };
      assert.deepEqual(
        listed.rules.map((r) => [r.model, r.times, r.fault.reason]),
        [
          ['claude-sonnet-emu', null, 'no-channel'],
          ['gpt-4o', null, 'overloaded'],
        ],
      );

      assert.equal((await control('/__emulator/faults', { clear: true, model: 'claude-sonnet-emu' })).status, 200);
      assert.equal((await send(messages('claude-sonnet-emu'))).status, 200, 'that model answers again');
      assert.equal((await send(chat('gpt-4o'))).status, 529, "the other model's rule stays");
      assert.equal((await control('/__emulator/faults', { clear: true })).status, 200);
      assert.equal((await send(chat('gpt-4o'))).status, 200);
      const empty = (await (await control('/__emulator/faults/list', {})).json()) as { rules: unknown[] };
      assert.deepEqual(empty.rules, []);
    });
  });

  describe('stalls', () => {
    /** A raw streamed request: its head, the bytes received so far, and a way to abort it. */
    function openStream(r: {
      path: string;
      body: unknown;
    }): Promise<{ res: IncomingMessage; received: () => string; abort: () => void; ended: Promise<void> }> {
      return new Promise((resolve, reject) => {
        const url = new URL(`${ctx.emu.url}${r.path}`);
        const req = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (text += d));
            const ended = new Promise<void>((done) => {
              res.on('end', () => done());
              res.on('close', () => done());
            });
            resolve({ res, received: () => text, abort: () => req.destroy(), ended });
          },
        );
        req.on('error', (err) => {
          if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
        });
        req.end(JSON.stringify(r.body));
      });
    }

    const events = (text: string) => text.split('\n\n').filter((e) => e.trim().length > 0);
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    async function untilClosed(before: number): Promise<void> {
      for (let i = 0; i < 200 && ctx.emu.clientClosedStreams === before; i++) await sleep(5);
      assert.equal(ctx.emu.clientClosedStreams, before + 1, 'the emulator saw the client go away');
    }

    it('after 0 events: the head and nothing else, until the client aborts; no timer left behind', async () => {
      busy('new-api', 'gpt-4o-mini', { kind: 'stall', afterEvents: 0, ms: 60_000 });
      const closedBefore = ctx.emu.clientClosedStreams;
      const s = await openStream(chat('gpt-4o-mini', { stream: true }));
      assert.equal(s.res.statusCode, 200);
      assert.match(String(s.res.headers['content-type']), /^text\/event-stream/);
      await sleep(250);
      assert.equal(s.received(), '', 'no event before the first token');
      assert.equal(stallsWaiting(), 1, 'the stall holds its timer while the client waits');
      s.abort();
      await untilClosed(closedBefore);
      // The stall's own count, not the process's timers: sockets' timers of other tests come and go on a busy machine.
      for (let i = 0; i < 50 && stallsWaiting() > 0; i++) await sleep(20);
      assert.equal(stallsWaiting(), 0, "the stall's timer went with the client");
      const last = ctx.emu.requestsTo('/v1/chat/completions').at(-1);
      assert.equal(last?.aborted, true);
      assert.equal((await send(chat('gpt-4o-mini'))).status, 200, 'the emulator answers on');
    });

    it('after 2 events on chat completions: the role-only chunk and one token, then silence', async () => {
      busy('new-api', 'gpt-4o', { kind: 'stall', afterEvents: 2 });
      const closedBefore = ctx.emu.clientClosedStreams;
      const s = await openStream(chat('gpt-4o', { stream: true }));
      await sleep(250);
      const got = events(s.received());
      assert.equal(got.length, 2, s.received());
      const first = JSON.parse(got[0].replace(/^data: /, '')) as { choices: { delta: Record<string, unknown> }[] };
      const second = JSON.parse(got[1].replace(/^data: /, '')) as { choices: { delta: { content?: string } }[] };
      assert.deepEqual(first.choices[0].delta, { role: 'assistant', content: '' }, 'the first event carries no token');
      assert.ok((second.choices[0].delta.content ?? '').length > 0, 'the second carries the first token');
      await sleep(150);
      assert.equal(events(s.received()).length, 2, 'nothing more');
      s.abort();
      await untilClosed(closedBefore);
    });

    it('after 1 event on messages: message_start only', async () => {
      busy('new-api', 'claude-sonnet-emu', { kind: 'stall', afterEvents: 1 });
      const closedBefore = ctx.emu.clientClosedStreams;
      const s = await openStream(messages('claude-sonnet-emu', { stream: true }));
      await sleep(250);
      const got = events(s.received());
      assert.equal(got.length, 1, s.received());
      assert.match(got[0], /^event: message_start\n/);
      s.abort();
      await untilClosed(closedBefore);
    });

    it('with ms: the stream goes on after the pause and ends as usual', async () => {
      busy('new-api', 'gpt-4o-mini', { kind: 'stall', afterEvents: 1, ms: 200 });
      const started = Date.now();
      const s = await openStream(chat('gpt-4o-mini', { stream: true }));
      await s.ended;
      assert.ok(Date.now() - started >= 190, 'it waited');
      const got = events(s.received());
      assert.equal(got.at(-1), 'data: [DONE]');
    });

    it('a request that is not streamed gets no byte for as long, then its answer', async () => {
      busy('new-api', 'gpt-4o-mini', { kind: 'stall', afterEvents: 0, ms: 200 });
      const started = Date.now();
      const a = await send(chat('gpt-4o-mini'));
      assert.equal(a.status, 200);
      assert.ok(Date.now() - started >= 190);
    });
  });

  describe('MODEL_GATEWAY_EMULATOR_BUSY', () => {
    it('reads model=what pairs', () => {
      assert.deepEqual(busyRulesFromEnv({ MODEL_GATEWAY_EMULATOR_BUSY: 'claude-sonnet-emu=no-channel, gpt-4o=rate-limit:30,gpt-4o-mini=stall:2' }), [
        { model: 'claude-sonnet-emu', times: Infinity, fault: { kind: 'busy', reason: 'no-channel' } },
        { model: 'gpt-4o', times: Infinity, fault: { kind: 'busy', reason: 'rate-limit', retryAfter: 30 } },
        { model: 'gpt-4o-mini', times: Infinity, fault: { kind: 'stall', afterEvents: 2 } },
      ]);
      assert.deepEqual(busyRulesFromEnv({}), []);
      assert.throws(() => busyRulesFromEnv({ MODEL_GATEWAY_EMULATOR_BUSY: 'gpt-4o=asleep' }), /not model=/);
      assert.throws(() => busyRulesFromEnv({ MODEL_GATEWAY_EMULATOR_BUSY: 'gpt-4o=no-channel:3' }), /only rate-limit and stall/);
    });

    it('starts `npm run emulator` with that model busy and the others answering', async function () {
      this.timeout(60_000);
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/emulator/cli.ts', '0'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, MODEL_GATEWAY_EMULATOR_BUSY: 'claude-sonnet-emu=no-channel' },
      });
      try {
        let out = '';
        const url = await new Promise<string>((resolve, reject) => {
          child.stdout.on('data', (d: Buffer) => {
            out += d.toString();
            const m = /listening on (http:\/\/[\d.:]+)/.exec(out);
            if (m && out.includes('Make a model busy')) resolve(m[1]);
          });
          child.on('exit', (code) => reject(new Error(`emulator exited (${code}): ${out}`)));
        });
        assert.match(out, /Busy from the start: claude-sonnet-emu \(no-channel\)/);
        const post = (body: unknown) =>
          fetch(`${url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
        for (let i = 0; i < 2; i++) assert.equal((await post(chat('claude-sonnet-emu').body)).status, 503);
        assert.equal((await post(chat('gpt-4o-mini').body)).status, 200);
      } finally {
        child.kill('SIGTERM');
      }
    });
  });
});
