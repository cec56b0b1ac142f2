// `sigil serve --workers N` ("uses every core of one machine"). The primary process
// forks N workers with node:cluster; each worker is a complete Sigil process (its own database pool,
// its own app-proof key and boot proof) and all of them listen on the same ports through the
// primary's shared listening sockets. Everything that must hold across processes already lives in the
// database, so N workers answer like one. The primary serves nothing itself: it prints the listening
// line once every worker listens, restarts a worker that dies (with backoff), and on SIGTERM/SIGINT
// has every worker drain and waits for them. Connections are handed out round-robin by the primary
// (node's default on Linux; the kernel's own choice piles them on one worker). One limit of that:
// a connection being handed to a worker at the instant it dies is lost (the client times out), so
// workers should not die, and clients retry as they must against any server.
import cluster, { type Worker } from 'node:cluster';
import { createServer, type AddressInfo, type Server } from 'node:net';
import type { Logger } from 'pino';

const LISTENING = 'sigil:listening';

interface ListeningMessage {
  type: typeof LISTENING;
  publicUrl: string;
  authProxyUrl: string;
}

/** In a worker: tells the primary this process is listening. */
export function reportListening(publicUrl: string, authProxyUrl: string): void {
  const message: ListeningMessage = { type: LISTENING, publicUrl, authProxyUrl };
  process.send?.(message);
}

export function isWorker(): boolean {
  return cluster.isWorker;
}

/**
 * Every worker listens on ports the primary fixed before forking. Workers asking for
 * port 0 would share whatever free port the first of them got, but only while one of them holds
 * it: were all to die at once, node:cluster would close that socket and new workers would bind new
 * random ports, leaving the announced URL dead. Fixed ports are bound again by restarted workers,
 * as a configured port is.
 */
const PINNED_PORTS_ENV = 'SIGIL_CLUSTER_PORTS';

/** In a worker: the ports its primary fixed. */
export function pinnedPorts(env: NodeJS.ProcessEnv): { port: number; authProxyPort: number; framesPort: number } | undefined {
  const m = /^(\d+),(\d+),(\d+)$/.exec(env[PINNED_PORTS_ENV] ?? '');
  return m ? { port: Number(m[1]), authProxyPort: Number(m[2]), framesPort: Number(m[3]) } : undefined;
}

/** In the primary: `port`, `authProxyPort` and `framesPort`, a port 0 replaced by a free port of `host` (distinct ones). */
export async function fixPorts(host: string, port: number, authProxyPort: number, framesPort: number): Promise<Record<string, string>> {
  const probes: Server[] = [];
  const pick = async (wanted: number): Promise<number> => {
    if (wanted !== 0) return wanted;
    const probe = createServer();
    probes.push(probe);
    await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, host, resolve));
    return (probe.address() as AddressInfo).port;
  };
  try {
    const ports = [await pick(port), await pick(authProxyPort), await pick(framesPort)];
    return { [PINNED_PORTS_ENV]: ports.join(',') };
  } finally {
    await Promise.all(probes.map((p) => new Promise((r) => p.close(r))));
  }
}

interface Slot {
  index: number;
  worker: Worker | undefined;
  startedAt: number;
  listening: boolean;
  /** Deaths in a row that came soon after a start; drives the backoff. */
  failures: number;
  restartTimer: NodeJS.Timeout | undefined;
}

/** A restarted worker waits 0.5 s, 1 s, 2 s … up to 30 s; a worker that lived a minute resets it. */
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 30_000;
const STABLE_AFTER_MS = 60_000;

export interface PrimaryOptions {
  workers: number;
  shutdownTimeoutMs: number;
  logger: Logger;
  /** What every worker's environment adds (the ports of fixPorts). */
  workerEnv?: Record<string, string>;
  /** Called once, when every worker of the first start listens. */
  onListening: (publicUrl: string, authProxyUrl: string) => void;
}

export function runPrimary(opts: PrimaryOptions): void {
  const { logger } = opts;
  const slots: Slot[] = Array.from({ length: opts.workers }, (_, index) => ({
    index,
    worker: undefined,
    startedAt: 0,
    listening: false,
    failures: 0,
    restartTimer: undefined,
  }));
  let announced = false;
  let shuttingDown = false;
  let exitCode = 0;

  const fork = (slot: Slot) => {
    const worker = cluster.fork(opts.workerEnv);
    slot.worker = worker;
    slot.startedAt = Date.now();
    slot.listening = false;
    worker.on('message', (m: Partial<ListeningMessage> | null) => {
      if (m?.type !== LISTENING) return;
      slot.listening = true;
      logger.info({ worker: slot.index, pid: worker.process.pid }, 'worker listening');
      if (!announced && slots.every((s) => s.listening)) {
        announced = true;
        opts.onListening(m.publicUrl!, m.authProxyUrl!);
      }
    });
  };

  const finishIfDone = () => {
    if (slots.every((s) => s.worker === undefined)) {
      logger.info({ exitCode }, 'all workers stopped');
      process.exit(exitCode);
    }
  };

  const shutdown = (reason: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ reason }, 'stopping workers: each drains its in-flight requests');
    for (const slot of slots) {
      clearTimeout(slot.restartTimer);
      slot.worker?.process.kill('SIGTERM');
    }
    // Workers cut their own connections at shutdownTimeoutMs; this only catches a worker that hangs.
    setTimeout(() => {
      for (const slot of slots) {
        if (slot.worker) {
          logger.error({ worker: slot.index, pid: slot.worker.process.pid }, 'worker did not stop in time; killing it');
          slot.worker.process.kill('SIGKILL');
        }
      }
      exitCode = 1;
    }, opts.shutdownTimeoutMs + 5_000).unref();
    finishIfDone();
  };

  cluster.on('exit', (worker, code, signal) => {
    const slot = slots.find((s) => s.worker === worker);
    if (!slot) return;
    slot.worker = undefined;
    if (shuttingDown) {
      if (code !== 0) exitCode = 1;
      finishIfDone();
      return;
    }
    if (!announced) {
      // A worker of the first start failed (its own message is on stderr): the deployment cannot
      // serve as configured, and restarting would only repeat the failure.
      logger.error({ worker: slot.index, pid: worker.process.pid, code, signal }, 'a worker failed to start; stopping');
      exitCode = 1;
      shutdown('worker failed to start');
      return;
    }
    if (Date.now() - slot.startedAt >= STABLE_AFTER_MS) slot.failures = 0;
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** slot.failures);
    slot.failures += 1;
    slot.listening = false;
    logger.warn({ worker: slot.index, pid: worker.process.pid, code, signal, restartInMs: delay }, 'worker exited unexpectedly; restarting it');
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = undefined;
      if (!shuttingDown) fork(slot);
    }, delay);
  });

  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  for (const slot of slots) fork(slot);
}
