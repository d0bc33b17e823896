// @profile-dependent: relay errors carry each server's type (new_api_error, one_api_error) and Messages errors their own shape.
import { compileFunction } from 'node:vm';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { strict as assert } from 'node:assert';
import {
  AccountApiError,
  APIStatusError,
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  GatewayClient,
  GatewayError,
  MissingCredentialError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
  TimeoutError,
  normalizeBaseUrl,
  parseRetryAfter,
  rateLimitHint,
  type RetryInfo,
} from '../../src/gateway';
import { freePort } from '../emulator/net';
import { clientFor, useEmulator } from './helpers';

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hello' }] };

describe('errors from the gateway', () => {
  const ctx = useEmulator();
  afterEach(() => ctx.emu.faults.clear());

  it('401 for an invalid, expired, disabled or exhausted key, each with its own fix', async () => {
    const { emu } = ctx;
    const user = emu.store.addUser({ username: 'u401' });
    const expired = emu.store.addKey({ userId: user.id, name: 'old', expiredTime: Math.floor(Date.now() / 1000) - 60 });
    const disabled = emu.store.addKey({ userId: user.id, name: 'off', status: 2 });
    const spent = emu.store.addKey({ userId: user.id, name: 'spent', remainQuota: 0 });
    const cases: [string, string, RegExp][] = [
      ['sk-not-a-real-key', 'invalid', /Set a valid key/],
      [expired.secret, 'expired', /has expired: extend its expiry/],
      [disabled.secret, 'disabled', /is disabled: enable it/],
      // A key's own quota is the relay's 401 on one-api and new-api (the user's balance is a 403).
      [spent.secret, 'exhausted', /own quota is used up: raise the key's quota/],
    ];
    for (const [apiKey, reason, advice] of cases) {
      const { client } = clientFor(emu, { apiKey });
      await assert.rejects(client.chat.completions.create(chat), (e: unknown) => {
        assert.ok(e instanceof AuthenticationError);
        assert.equal(e.status, 401);
        assert.equal(e.keyRefusal, reason);
        assert.match(e.message, advice);
        assert.ok(!e.message.includes(apiKey), 'the key never appears in an error message');
        return true;
      });
      assert.equal(await client.models.verifyKey(), false);
    }
    // No key at all: refused before sending, with the fix named.
    const before = emu.requests.length;
    const { client } = clientFor(emu, { apiKey: '' });
    await assert.rejects(
      client.chat.completions.create(chat),
      (e: unknown) => e instanceof MissingCredentialError && /Set the gateway API key/.test(e.message),
    );
    assert.equal(emu.requests.length, before);
  });

  it('verifyKey is true for a valid key and lists the models', async () => {
    const { client } = clientFor(ctx.emu);
    assert.equal(await client.models.verifyKey(), true);
    const ids = (await client.models.list()).map((m) => m.id);
    assert.ok(ids.includes('gpt-4o-mini') && ids.includes('claude-sonnet-emu'));
  });

  it('403 names the likely cause: balance, model, IP', async () => {
    const { emu } = ctx;
    const poor = emu.store.addUser({ username: 'poor', quota: 0 });
    const poorKey = emu.store.addKey({ userId: poor.id, name: 'k' });
    const rich = emu.store.addUser({ username: 'rich' });
    const modelKey = emu.store.addKey({ userId: rich.id, name: 'limited', models: ['gpt-4o'] });
    const ipKey = emu.store.addKey({ userId: rich.id, name: 'office', subnet: '10.0.0.0/8' });
    const expectations: [string, string][] = [
      [poorKey.secret, 'balance'],
      [modelKey.secret, 'model'],
      [ipKey.secret, 'ip'],
    ];
    for (const [apiKey, cause] of expectations) {
      const { client } = clientFor(emu, { apiKey });
      await assert.rejects(client.chat.completions.create(chat), (e: unknown) => {
        assert.ok(e instanceof PermissionDeniedError, String(e));
        assert.equal(e.cause403, cause);
        return true;
      });
    }
    const { client } = clientFor(emu, { apiKey: poorKey.secret });
    await assert.rejects(client.chat.completions.create(chat), /top up the balance/);
    const { client: c2 } = clientFor(emu, { apiKey: modelKey.secret });
    assert.ok((await c2.chat.completions.create({ ...chat, model: 'gpt-4o' })).choices[0].message.content);
  });

  it('503 for an unknown model id (case matters)', async () => {
    const { client } = clientFor(ctx.emu, { maxRetries: 0 });
    await assert.rejects(client.chat.completions.create({ ...chat, model: 'GPT-4o-mini' }), (e: unknown) => {
      assert.ok(e instanceof ServiceUnavailableError);
      assert.equal(e.code, 'model_not_found');
      assert.match(e.message, /case matters/);
      return true;
    });
  });

  it('reads every error envelope: chat style, messages style, account style, plain text', async () => {
    const { client } = clientFor(ctx.emu);
    const cases: [unknown, number, (e: GatewayError) => void][] = [
      [
        { error: { message: 'bad channel id', type: 'invalid_request_error', code: 'invalid_parameter' } },
        400,
        (e) => {
          assert.ok(e instanceof BadRequestError);
          assert.equal(e.type, 'invalid_request_error');
          assert.equal(e.code, 'invalid_parameter');
          assert.match(e.message, /bad channel id/);
        },
      ],
      [
        { type: 'error', error: { type: 'permission_error', message: 'insufficient role' }, request_id: 'req_9' },
        403,
        (e) => {
          assert.ok(e instanceof PermissionDeniedError);
          assert.equal(e.type, 'permission_error');
          assert.equal(e.cause403, 'role');
          assert.equal(e.requestId, 'req_9');
        },
      ],
      [
        { success: false, message: '用户额度不足' },
        403,
        (e) => {
          assert.ok(e instanceof PermissionDeniedError);
          assert.equal(e.cause403, 'balance');
          assert.match(e.message, /用户额度不足/);
        },
      ],
      [
        '<html>Bad Gateway</html>',
        418,
        (e) => {
          assert.ok(e instanceof APIStatusError);
          assert.equal(e.status, 418);
          assert.match(e.message, /Bad Gateway/);
        },
      ],
    ];
    for (const [body, status, check] of cases) {
      ctx.emu.inject({ fault: { kind: 'status', status, body } });
      const err = await client.chat.completions.create(chat).then(
        () => assert.fail('expected an error'),
        (e: GatewayError) => e,
      );
      check(err);
    }
    // The account API's success:false on HTTP 200 has its own class for the account resource.
    assert.ok(new AccountApiError('x') instanceof GatewayError);
  });
});

describe('retries', () => {
  const ctx = useEmulator();
  afterEach(() => ctx.emu.faults.clear());

  it('retries 429 and 503 up to 3 attempts in all, waiting 2^(attempt-1) s plus a random fraction', async () => {
    const retries: RetryInfo[] = [];
    const { client, waits } = clientFor(ctx.emu, { onRetry: (r) => retries.push(r) });
    ctx.emu.inject({ fault: { kind: 'status', status: 503 }, times: 2 });
    const before = ctx.emu.requestsTo('/v1/chat/completions').length;
    const ok = await client.chat.completions.create(chat);
    assert.ok(ok.choices[0].message.content);
    assert.equal(ctx.emu.requestsTo('/v1/chat/completions').length - before, 3);
    assert.deepEqual(waits, [1500, 2500]); // random() is 0.5 in tests
    assert.deepEqual(
      retries.map((r) => r.attempt),
      [1, 2],
    );

    ctx.emu.inject({ fault: { kind: 'status', status: 429 }, times: 3 });
    const start = ctx.emu.requestsTo('/v1/chat/completions').length;
    await assert.rejects(client.chat.completions.create(chat), RateLimitError);
    assert.equal(ctx.emu.requestsTo('/v1/chat/completions').length - start, 3, 'gives up after 3 attempts');
  });

  it('honours retry-after-ms and retry-after (seconds), and refuses waits over the cap', async () => {
    const { client, waits } = clientFor(ctx.emu);
    ctx.emu.inject({ fault: { kind: 'status', status: 429, retryAfterMs: 250 } });
    await client.chat.completions.create(chat);
    ctx.emu.inject({ fault: { kind: 'status', status: 503, retryAfter: '3' }, path: '/v1/chat' });
    await client.chat.completions.create(chat);
    assert.deepEqual(waits, [250, 3000]);

    const { client: strict, waits: none } = clientFor(ctx.emu);
    ctx.emu.inject({ fault: { kind: 'status', status: 429, retryAfter: '120' } });
    await assert.rejects(strict.chat.completions.create(chat), (e: unknown) => {
      assert.ok(e instanceof RateLimitError);
      assert.equal(e.retryAfterMs, 120_000);
      assert.match(e.message, /Retry in 120 s/);
      return true;
    });
    assert.deepEqual(none, [], 'a 2-minute wait is handed to the caller, not slept through');
  });

  it("new-api's own rate limit (429, a Chinese message, no Retry-After): waits out the window it names, then passes", async () => {
    const { emu } = ctx;
    const profile = emu.profile;
    emu.profile = 'new-api';
    emu.setModelRateLimit({ minutes: 1, total: 0, success: 2 });
    try {
      // The client's waits move the emulator's clock: the real limiter, in virtual time.
      const waits: number[] = [];
      const { client } = clientFor(emu, {
        sleep: (ms) => {
          waits.push(ms);
          emu.clock.advance(ms);
          return Promise.resolve();
        },
      });
      await client.chat.completions.create(chat);
      await client.chat.completions.create(chat);
      const before = emu.requestsTo('/v1/chat/completions').length;
      const third = await client.chat.completions.create(chat);
      assert.ok(third.choices[0].message.content);
      assert.equal(emu.requestsTo('/v1/chat/completions').length - before, 2, 'refused once, then passed: no early retry spent the window');
      assert.equal(waits.length, 1);
      assert.ok(waits[0] >= 60_000 && waits[0] <= 61_000, `waited the named window (1 min) plus jitter, not 1 s: ${waits[0]}`);
    } finally {
      emu.setModelRateLimit(undefined);
      emu.clock.reset();
      emu.profile = profile;
    }
  });

  it('a window longer than the time budget is not waited out: the error says both languages and the wait', async () => {
    const { emu } = ctx;
    const profile = emu.profile;
    emu.profile = 'new-api';
    emu.setModelRateLimit({ minutes: 2, total: 1, success: 100 });
    try {
      const { client, waits } = clientFor(emu);
      await client.chat.completions.create(chat);
      const before = emu.requestsTo('/v1/chat/completions').length;
      await assert.rejects(client.chat.completions.create(chat), (e: unknown) => {
        assert.ok(e instanceof RateLimitError);
        assert.equal(e.retryAfterMs, 120_000);
        assert.deepEqual(e.limitWindow, { minutes: 2, requests: 1, countsFailures: true });
        assert.match(e.message, /at most 1 requests in 2 min, failed ones included/);
        assert.match(e.message, /Retry in 120 s/);
        assert.match(e.message, /您已达到总请求数限制：2分钟内最多请求1次/, "the gateway's own words beside ours");
        return true;
      });
      assert.equal(emu.requestsTo('/v1/chat/completions').length - before, 1, 'no retry: each one would count against the window');
      assert.deepEqual(waits, []);
    } finally {
      emu.setModelRateLimit(undefined);
      emu.profile = profile;
    }
  });

  it('reads the wait from messages that name one, and from none that do not', () => {
    assert.deepEqual(rateLimitHint('您已达到请求数限制：1分钟内最多请求3次 (request id: 2026112801)'), {
      waitMs: 60_000,
      window: { minutes: 1, requests: 3, countsFailures: false },
    });
    assert.equal(rateLimitHint('Rate limit reached for gpt-4o. Please try again in 20s.')?.waitMs, 20_000);
    assert.equal(rateLimitHint('Please try again in 350ms')?.waitMs, 350);
    assert.equal(rateLimitHint('try again in 1.5 minutes')?.waitMs, 90_000);
    assert.equal(rateLimitHint('Too many requests, please slow down.'), undefined);
  });

  it('does not retry 400, 401 or 403', async () => {
    const { client, waits } = clientFor(ctx.emu);
    for (const status of [400, 401, 403]) {
      ctx.emu.inject({ fault: { kind: 'status', status } });
      const before = ctx.emu.requests.length;
      await assert.rejects(client.chat.completions.create(chat), APIStatusError);
      assert.equal(ctx.emu.requests.length - before, 1);
    }
    assert.deepEqual(waits, []);
  });

  it('retries a connection dropped before any response byte', async () => {
    const { client, waits } = clientFor(ctx.emu);
    ctx.emu.inject({ fault: { kind: 'reset' } });
    const before = ctx.emu.requests.length;
    const ok = await client.chat.completions.create(chat);
    assert.ok(ok.id);
    assert.equal(ctx.emu.requests.length - before, 2);
    assert.equal(waits.length, 1);
  });

  it('gives a ConnectionError when nothing listens, after the retries', async () => {
    const port = await freePort();
    const waits: number[] = [];
    const client = new GatewayClient({ baseUrl: `http://127.0.0.1:${port}/v1/`, apiKey: 'sk-x', sleep: (ms) => (waits.push(ms), Promise.resolve()) });
    await assert.rejects(client.models.list(), (e: unknown) => e instanceof ConnectionError && /ECONNREFUSED/.test(e.message));
    assert.equal(waits.length, 2);
  });

  it('times out a slow first byte with a TimeoutError', async () => {
    const { client } = clientFor(ctx.emu, { timeoutMs: 100, maxRetries: 0 });
    ctx.emu.inject({ fault: { kind: 'slowFirstByte', ms: 600 } });
    await assert.rejects(client.chat.completions.stream(chat).finalCompletion(), TimeoutError);
  });
});

describe('transport details', () => {
  it('accepts a base URL with or without /v1 and a trailing slash', () => {
    for (const raw of ['https://gw.example.com', 'https://gw.example.com/', 'https://gw.example.com/v1', 'https://gw.example.com/v1/']) {
      assert.equal(normalizeBaseUrl(raw), 'https://gw.example.com');
    }
    assert.equal(normalizeBaseUrl('http://127.0.0.1:3000/proxy/v1/'), 'http://127.0.0.1:3000/proxy');
    assert.throws(() => normalizeBaseUrl('not a url'), /not a valid URL/);
    assert.throws(() => normalizeBaseUrl('ftp://x.test'), /http or https/);
  });

  it('parses retry-after in milliseconds, seconds and as an HTTP date', () => {
    assert.equal(parseRetryAfter({ 'retry-after-ms': '1500' }), 1500);
    assert.equal(parseRetryAfter({ 'retry-after': '2.5' }), 2500);
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(parseRetryAfter({ 'retry-after': 'Thu, 01 Jan 2026 00:00:10 GMT' }, now), 10_000);
    assert.equal(parseRetryAfter({}), undefined);
  });
});

describe('error names survive the production build', () => {
  it('keeps every error class name in the minified client bundle (the UI tells errors apart by name)', async () => {
    const { build } = await import('esbuild');
    const out = await build({
      entryPoints: ['src/entries/gateway-entry.ts'],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      minify: true,
      keepNames: true,
      write: false,
      external: ['vscode'],
    });
    const mod = { exports: {} as Record<string, unknown> };
    const load = compileFunction(out.outputFiles[0].text, ['module', 'exports', 'require']) as (m: unknown, e: unknown, r: NodeJS.Require) => void;
    load(mod, mod.exports, require);
    const gw = mod.exports as Record<string, new (...args: never[]) => Error>;
    for (const name of [
      'PermissionDeniedError',
      'AuthenticationError',
      'RateLimitError',
      'ServiceUnavailableError',
      'ConnectionError',
      'AbortError',
      'StreamError',
      'AccountApiError',
    ]) {
      assert.equal(gw[name].name, name);
    }
    const e = new (gw.PermissionDeniedError as unknown as new (s: number, a: string, b: string, c: string) => Error)(403, 'x', 'y', 'balance');
    assert.equal(e.name, 'PermissionDeniedError');
  });
});

describe('error class names survive minification', () => {
  it('every error class of the gateway client names itself (bundles tell errors apart by name)', () => {
    const root = join(__dirname, '..', '..', 'src', 'gateway');
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const unnamed: string[] = [];
    let classes = 0;
    for (const f of files) {
      const text = readFileSync(join(root, f), 'utf8');
      for (const m of text.matchAll(/export class (\w+Error) extends \w+ \{\n([^\n]*)/g)) {
        classes++;
        if (!m[2].includes(`readonly name: string = '${m[1]}'`)) unnamed.push(`${f}: ${m[1]}`);
      }
    }
    assert.ok(classes >= 20, `found ${classes} error classes`);
    assert.deepEqual(unnamed, []);
  });
});
