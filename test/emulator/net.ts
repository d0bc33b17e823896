import type { Server } from 'node:http';
import { createServer } from 'node:net';

/** Closes a server now: open keep-alive connections are dropped instead of waited for. */
export async function closeNow(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A loopback port nothing listens on (for a refused connection, or a server started on it later). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}
