// Graceful shutdown of the HTTP servers ("SIGTERM drains in-flight requests and exits
// cleanly"). Closing a Fastify server stops accepting connections, answers requests that arrive on
// open connections with 503 (return503OnClosing) and waits for every connection to end. Node closes
// only the connections idle at that moment, though: a keep-alive connection whose request was in
// flight stays open after its response until keepAliveTimeout (72 s in Fastify). So idle connections
// are closed again every few milliseconds until the servers are done, and whatever is still open at
// the deadline is cut.
import type { Server } from 'node:http';

export interface Drainable {
  server: Server;
  close(): Promise<unknown>;
}

const REAP_EVERY_MS = 25;

/** Resolves when all servers are closed; `forced` when the deadline cut connections with requests in flight. */
export async function drainServers(servers: Drainable[], timeoutMs: number): Promise<{ forced: boolean }> {
  let forced = false;
  const reaper = setInterval(() => {
    for (const s of servers) s.server.closeIdleConnections();
  }, REAP_EVERY_MS);
  const deadline = setTimeout(() => {
    forced = true;
    for (const s of servers) s.server.closeAllConnections();
  }, timeoutMs);
  try {
    await Promise.all(servers.map((s) => s.close()));
  } finally {
    clearInterval(reaper);
    clearTimeout(deadline);
  }
  return { forced };
}
