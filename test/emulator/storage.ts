import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeNow } from './net';

/**
 * A storage origin on another port (another origin), where real gateways redirect downloads
 * (video content, generated images) with a signed URL. Like S3, it refuses a request that also
 * carries an Authorization header: a client that forwards the gateway key is caught here.
 */
export class StorageOrigin {
  private server: Server | undefined;
  private readonly objects = new Map<string, { bytes: Buffer; type: string }>();
  url = '';
  /** Requests that arrived with a credential header (each a leak of the gateway key). */
  readonly credentialLeaks: string[] = [];
  served = 0;

  async start(): Promise<void> {
    if (this.server) return;
    const server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://storage').pathname;
      const leaked = ['authorization', 'x-api-key', 'api-key', 'new-api-user'].filter((h) => req.headers[h] !== undefined);
      if (leaked.length > 0) {
        this.credentialLeaks.push(`${path}: ${leaked.join(', ')}`);
        res.writeHead(400, { 'content-type': 'application/xml' });
        res.end(
          '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidArgument</Code><Message>Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified</Message></Error>',
        );
        return;
      }
      const obj = this.objects.get(path);
      if (!obj) {
        res.writeHead(404, { 'content-type': 'application/xml' });
        res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code></Error>');
        return;
      }
      this.served++;
      res.writeHead(200, { 'content-type': obj.type, 'content-length': obj.bytes.length });
      res.end(obj.bytes);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Stores bytes and returns their signed URL. */
  put(bytes: Buffer, type: string, name: string): string {
    const path = `/bucket/${randomBytes(6).toString('hex')}/${name}`;
    this.objects.set(path, { bytes, type });
    return `${this.url}${path}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-Signature=${randomBytes(16).toString('hex')}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await closeNow(server);
  }
}
