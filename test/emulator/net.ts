import type { Server } from 'node:http';

/** Closes a server now: open keep-alive connections are dropped instead of waited for. */
export async function closeNow(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
