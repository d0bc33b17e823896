import { strict as assert } from 'node:assert';
import { Multipart } from '../../src/gateway/core/multipart';

async function bytes(m: Multipart): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of m.chunks()) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

describe('multipart bodies (our encoder, read back by the platform parser)', () => {
  it('encodes fields and files so a standard parser reads them back, with the declared length', async () => {
    const m = new Multipart();
    m.append('model', 'whisper-1');
    m.append('timestamp_granularities[]', 'word');
    m.append('file', new Blob([Buffer.from([0, 1, 2, 255])], { type: 'audio/mpeg' }), 'talk "final".mp3');
    const body = await bytes(m);
    assert.equal(body.length, m.length, 'Content-Length matches the bytes sent');
    const form = await new Request('http://x/', { method: 'POST', body, headers: { 'content-type': m.contentType } }).formData();
    assert.equal(form.get('model'), 'whisper-1');
    assert.equal(form.get('timestamp_granularities[]'), 'word');
    const file = form.get('file') as File;
    assert.equal(file.name, 'talk "final".mp3', 'quotes escaped on the wire (%22) and read back');
    assert.equal(file.type, 'audio/mpeg');
    assert.deepEqual([...new Uint8Array(await file.arrayBuffer())], [0, 1, 2, 255]);
  });

  it('produces the same body again for a retry', async () => {
    const m = new Multipart();
    m.append('file', new Blob(['abc'], { type: 'text/plain' }), 'a.txt');
    assert.deepEqual(await bytes(m), await bytes(m));
  });
});
