/**
 * The only way out of the sandbox's network: an HTTP proxy on a Unix socket that lets through the
 * hosts the person allowed and refuses the rest, noting which hosts a command wanted (so the person
 * can be asked for exactly those). Inside the sandbox, socat bridges 127.0.0.1:3128 to the socket
 * and the usual proxy variables point there; a program that ignores them finds no network at all.
 *
 * HTTPS goes through `CONNECT host:port` (the proxy sees the host, never the content); plain HTTP
 * through absolute-URL requests, forwarded as they are.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';

/** Whether `host` is one of `allowed` (`example.com`, or `*.example.com` for its subdomains), in any letter case. */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  const h = host
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^\[(.*)\]$/, '$1');
  return allowed.some((entry) => {
    const a = entry.trim().toLowerCase().replace(/\.$/, '');
    if (!a) return false;
    if (a.startsWith('*.')) return h.endsWith(a.slice(1)) && h.length > a.length - 1;
    return h === a;
  });
}

/** `host:port` of a CONNECT target, or undefined when it is not one. */
function splitTarget(target: string): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(target);
  if (!m) return undefined;
  const port = Number(m[2]);
  return port > 0 && port < 65536 ? { host: m[1].replace(/^\[(.*)\]$/, '$1'), port } : undefined;
}

export class HostProxy {
  /** The hosts a command tried to reach and was refused, in the order it tried them. */
  readonly refused = new Set<string>();
  /** The hosts it reached. */
  readonly reached = new Set<string>();
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly allowed: readonly string[]) {
    this.server = createServer((req, res) => this.forward(req, res));
    this.server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => this.tunnel(req, client, head));
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  /** Listens on a Unix socket (a path in the command's private folder). */
  listen(socketPath: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(socketPath, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  private permit(host: string): boolean {
    if (hostAllowed(host, this.allowed)) {
      this.reached.add(host.toLowerCase());
      return true;
    }
    this.refused.add(host.toLowerCase());
    return false;
  }

  private tunnel(req: IncomingMessage, client: Socket, head: Buffer): void {
    const target = splitTarget(req.url ?? '');
    if (!target || !this.permit(target.host)) {
      client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${refusal(target?.host ?? req.url ?? '')}\n`);
      return;
    }
    const upstream = connect(target.port, target.host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    this.sockets.add(upstream);
    upstream.on('close', () => this.sockets.delete(upstream));
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n'));
    client.on('error', () => upstream.destroy());
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end('The sandbox proxy takes absolute URLs only.\n');
      return;
    }
    if (url.protocol !== 'http:' || !this.permit(url.hostname)) {
      res.writeHead(403, { 'Content-Type': 'text/plain' }).end(`${refusal(url.hostname)}\n`);
      return;
    }
    const upstream = httpRequest(url, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(upstream);
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function refusal(host: string): string {
  return `Model Gateway sandbox: the network is closed to ${host} (not in modelGateway.agent.sandbox.allowedHosts, not approved for this command).`;
}
