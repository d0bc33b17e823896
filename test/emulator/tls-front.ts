/**
 * Stand-ins for the network between a user and the gateway, built from real parts: a certificate
 * authority made for the test (like a company's TLS-inspecting root), a TLS server in front of the
 * emulator presenting a certificate it signed, and a real HTTP proxy from npm (`proxy`, CONNECT
 * tunnels, optional Basic auth) that logs what it was asked to reach.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { generate } from 'selfsigned';

export interface TestCa {
  /** The CA's certificate (PEM): what a user adds to `modelGateway.tls.caFiles`. */
  cert: string;
  key: string;
  name: string;
}

export interface ServerCert {
  cert: string;
  key: string;
}

export async function makeTestCa(name = 'Model Gateway Test Root CA'): Promise<TestCa> {
  const ca = await generate(
    [
      { name: 'commonName', value: name },
      { name: 'organizationName', value: 'Model Gateway Tests' },
    ],
    {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notAfterDate: new Date(Date.now() + 7 * 86_400_000),
      extensions: [
        { name: 'basicConstraints', cA: true, critical: true },
        { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      ],
    },
  );
  return { cert: ca.cert, key: ca.private, name };
}

/** A server certificate signed by the CA: for 127.0.0.1 and localhost unless told other names. */
export async function issueCert(ca: TestCa, o: { dns?: string[]; ips?: string[]; expired?: boolean } = {}): Promise<ServerCert> {
  const dns = o.dns ?? ['localhost'];
  const ips = o.ips ?? ['127.0.0.1'];
  const now = Date.now();
  const leaf = await generate([{ name: 'commonName', value: dns[0] ?? ips[0] ?? 'server' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now - (o.expired ? 10 : 1) * 86_400_000),
    notAfterDate: new Date(now + (o.expired ? -2 : 7) * 86_400_000),
    ca: { cert: ca.cert, key: ca.key },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [...dns.map((value) => ({ type: 2 as const, value })), ...ips.map((ip) => ({ type: 7 as const, ip }))] },
    ],
  });
  return { cert: leaf.cert, key: leaf.private };
}

export interface TlsFront {
  /** `https://127.0.0.1:<port>` */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** TLS in front of a plain-http server (the emulator): decrypts and passes the bytes through. */
export async function startTlsFront(targetPort: number, cert: ServerCert): Promise<TlsFront> {
  const sockets = new Set<Socket>();
  const server: TlsServer = createTlsServer({ cert: cert.cert, key: cert.key }, (tls) => {
    const plain = netConnect(targetPort, '127.0.0.1');
    sockets.add(tls);
    sockets.add(plain);
    tls.pipe(plain).pipe(tls);
    const end = () => {
      tls.destroy();
      plain.destroy();
    };
    tls.on('error', end).on('close', end);
    plain.on('error', end).on('close', end);
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface TestProxy {
  /** `http://127.0.0.1:<port>` (no credentials in it). */
  url: string;
  /** What it was asked: `CONNECT 127.0.0.1:443`, `GET http://…`, with the answer status. */
  readonly log: { method: string; target: string; status?: number }[];
  close(): Promise<void>;
}

/** A real HTTP proxy (npm `proxy`), with Basic auth when `user` and `password` are given. */
export async function startProxy(auth?: { user: string; password: string }): Promise<TestProxy> {
  const { createProxy } = await import('proxy');
  const log: TestProxy['log'] = [];
  const server: Server = createProxy(createHttpServer());
  const expected = auth ? `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}` : undefined;
  (server as Server & { authenticate?: (req: IncomingMessage) => boolean }).authenticate = (req) => {
    const ok = !expected || req.headers['proxy-authorization'] === expected;
    log.push({ method: req.method ?? '', target: req.url ?? '', status: ok ? undefined : 407 });
    return ok;
  };
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
