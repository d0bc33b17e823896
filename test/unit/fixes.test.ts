import { strict as assert } from 'node:assert';
import { AuthenticationError, PermissionDeniedError, RateLimitError } from '../../src/gateway/core/errors';
import { factsOf, fixesFor } from '../../src/common/fixes';

const titles = (f: { title: string }[]) => f.map((x) => x.title);

describe('one error→fix map for notifications and chat cards', () => {
  it('gives a live error and the facts a stored chat turn keeps the same buttons', () => {
    const live = new PermissionDeniedError(403, 'Insufficient balance', 'Insufficient balance: top up the balance.', 'balance');
    const stored = { kind: 'PermissionDeniedError', message: live.message, cause403: 'balance' };
    const ctx = { hasBaseUrl: true, place: 'chat' as const };
    assert.deepEqual(fixesFor(factsOf(live), ctx), fixesFor(stored, ctx));
    assert.deepEqual(titles(fixesFor(stored, ctx)), ['Top Up Balance']);
  });

  it('sends a refused but known key to the Account view, an invalid one to Set API Key', () => {
    const expired = new AuthenticationError(401, 'token expired', 'This API key has expired.', 'expired');
    assert.deepEqual(titles(fixesFor(factsOf(expired), { hasBaseUrl: true, place: 'notification' })), ['Open Account View', 'Set API Key']);
    const invalid = new AuthenticationError(401, 'invalid token', 'The API key is invalid.', 'invalid');
    assert.deepEqual(titles(fixesFor(factsOf(invalid), { hasBaseUrl: true, place: 'chat' })), ['Set API Key']);
  });

  it('picks another model in the chat, sets the default model elsewhere; a rate limit has no fix button', () => {
    const model = { kind: 'PermissionDeniedError', message: 'no access to this model', cause403: 'model' };
    assert.equal(fixesFor(model, { hasBaseUrl: true, place: 'chat' })[0].command, 'modelGateway.chat.pickModel');
    assert.equal(fixesFor(model, { hasBaseUrl: true, place: 'notification' })[0].command, 'modelGateway.models.setDefault');
    assert.deepEqual(fixesFor(factsOf(new RateLimitError(429, 'slow down', 'Rate limited.', undefined)), { hasBaseUrl: true, place: 'chat' }), []);
  });

  it('asks for the gateway URL first when none is set', () => {
    assert.deepEqual(titles(fixesFor({ kind: 'MissingCredentialError', message: 'No API key is set.' }, { hasBaseUrl: false, place: 'chat' })), [
      'Set Gateway URL',
    ]);
    assert.deepEqual(titles(fixesFor({ kind: 'MissingCredentialError', message: 'No API key is set.' }, { hasBaseUrl: true, place: 'chat' })), ['Set API Key']);
  });
});
