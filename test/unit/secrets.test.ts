import { strict as assert } from 'node:assert';
import { inspect } from 'node:util';
import { readFileSync } from 'node:fs';
import { newId } from '../../src/common/conversation';
import { ValidationError } from '../../src/gateway';
import { generateToolCallId } from '../../src/gateway/resources/chat';
import { checkImageBytes, checkImageUrl, sniffImageType } from '../../src/common/imageRules';
import { REDACTED, redactSecrets, secretVariants } from '../../src/gateway/core/redact';
import { redact, registerSecret as registerShellSecret } from '../../src/shell/redact';
import { clientFor, useEmulator } from './helpers';

describe('redaction of secrets', () => {
  const key = 'sk-Zq8mX2vB7nL4pR9tK1wY6hJ3cF5dG0sA8eQ2uI7oP4';

  it('removes a known key in every form a server echoes it', () => {
    const bare = key.slice(3);
    const text = `Incorrect API key provided: ${key}; stored as ${bare}; in a URL ${encodeURIComponent(`${key}/x`)}`;
    const out = redactSecrets(text, [key]);
    for (const form of secretVariants(key)) assert.ok(!out.includes(form), `${form} survived`);
    assert.ok(!out.includes(bare.slice(0, 20)));
    assert.match(out, /Incorrect API key provided: «redacted»/);
  });

  it('removes unknown secrets by shape: JSON fields, headers, URL parameters, user:password, bearer tokens', () => {
    const cases: [string, string][] = [
      ['{"x-api-key":"abc123secretvalue","model":"gpt"}', 'abc123secretvalue'],
      ['{"api_key": "qwe-rty-uio-pas", "n": 1}', 'qwe-rty-uio-pas'],
      ['{"Authorization":"Bearer tok_live_998877"}', 'tok_live_998877'],
      ['{"key":"0123456789abcdef0123"}', '0123456789abcdef0123'],
      ['GET https://gw.example.com/v1/models?key=AIzaSyD-secret-123&alt=json', 'AIzaSyD-secret-123'],
      ['https://gw.example.com/x?alt=1&api_key=hunter2hunter2', 'hunter2hunter2'],
      ['https://storage.example.com/v.mp4?X-Amz-Credential=AKIA123&X-Amz-Signature=deadbeefcafe', 'deadbeefcafe'],
      ['could not reach https://alice:s3cr3t-pass@gw.example.com/v1', 's3cr3t-pass'],
      ['x-api-key: plainheadersecret99', 'plainheadersecret99'],
      ['authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig', 'eyJhbGciOiJIUzI1NiJ9'],
      ['the key sk-abcdefghijklmnop123 was refused', 'sk-abcdefghijklmnop123'],
      // As util.inspect prints objects (a logged request's headers): single quotes, bare keys.
      [inspect({ headers: { 'x-api-key': 'inspectedsecret01', 'content-type': 'application/json' } }), 'inspectedsecret01'],
      [inspect({ 'api-key': 'inspectedsecret02' }), 'inspectedsecret02'],
      [inspect({ token: 'inspectedsecret03', model: 'gpt' }), 'inspectedsecret03'],
      [inspect({ 'New-Api-User': '12345678', note: "it's" }), '12345678'],
    ];
    for (const [text, secret] of cases) {
      const out = redactSecrets(text);
      assert.ok(!out.includes(secret), `${secret} survived in ${out}`);
      assert.ok(out.includes(REDACTED), out);
    }
    assert.equal(redactSecrets('model gpt-4o answered 42 tokens at https://gw.example.com/v1'), 'model gpt-4o answered 42 tokens at https://gw.example.com/v1');
  });

  it('the shell log and notifications clean what Credentials registered, in every form', () => {
    registerShellSecret(key);
    assert.ok(!redact(`echo ${key.slice(3)}`).includes(key.slice(3)));
  });
});

describe('random ids and nonces come from crypto', () => {
  it('ids differ even when Math.random repeats itself within one millisecond', () => {
    const real = Math.random;
    Math.random = () => 0.5;
    try {
      const ids = new Set(Array.from({ length: 50 }, () => newId('c')));
      const calls = new Set(Array.from({ length: 50 }, () => generateToolCallId().replace(/^call_gen_[a-z0-9]+?(?=[0-9a-f]{8}$)/, '')));
      assert.equal(ids.size, 50);
      assert.equal(calls.size, 50, 'the random part of generated tool-call ids is not Math.random');
    } finally {
      Math.random = real;
    }
  });

  it('no source file draws a nonce or an id from Math.random', () => {
    for (const file of ['src/chat/host/panel.ts', 'src/common/conversation.ts', 'src/gateway/resources/chat.ts', 'src/assets/host/player.ts']) {
      assert.ok(!readFileSync(file, 'utf8').includes('Math.random'), file);
    }
  });
});

describe('images are checked by their bytes', () => {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
  const gif = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1');
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16]);
  const webp = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 ')]);

  it('tells PNG, JPEG, WEBP and GIF apart by magic numbers', () => {
    assert.equal(sniffImageType(png), 'image/png');
    assert.equal(sniffImageType(jpeg), 'image/jpeg');
    assert.equal(sniffImageType(webp), 'image/webp');
    assert.equal(sniffImageType(gif), 'image/gif');
    assert.equal(sniffImageType(Buffer.from('hello world')), undefined);
    assert.equal(checkImageBytes('image/png', png), undefined);
    assert.match(checkImageBytes('image/png', jpeg) ?? '', /JPEG image but is labelled image\/png/);
  });

  it('GIF bytes labelled image/png are refused before anything is sent', () => {
    assert.match(checkImageUrl(`data:image/png;base64,${gif.toString('base64')}`) ?? '', /GIF image \(labelled image\/png\)/);
    assert.match(checkImageUrl(`data:image/png;base64,${Buffer.from('just text').toString('base64')}`) ?? '', /not a PNG, JPEG or WEBP/);
    assert.equal(checkImageUrl(`data:image/png;base64,${png.toString('base64')}`), undefined);
  });

  describe('through the client', () => {
    const ctx = useEmulator();
    it('a chat message with a GIF named as PNG is a ValidationError and no request', async () => {
      const { client } = clientFor(ctx.emu);
      const before = ctx.emu.requests.length;
      await assert.rejects(
        client.chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${gif.toString('base64')}` } }] }],
        }),
        (e: unknown) => e instanceof ValidationError && /GIF/.test(e.message),
      );
      await assert.rejects(
        client.messages.create({
          model: 'claude-sonnet-emu',
          max_tokens: 10,
          messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: gif.toString('base64') } }] }],
        }),
        (e: unknown) => e instanceof ValidationError && /GIF/.test(e.message),
      );
      assert.equal(ctx.emu.requests.length, before);
    });
  });
});
