// HTTP/1.1 spoken by hand over a TCP socket, for what no client library does on purpose: sending
// headers or a body slowly, holding connections, sending more than the server wants. Also the CPU
// time of a server's event-loop thread, read from /proc (a figure tests print, never assert on).
import net from 'node:net';
import { readFileSync } from 'node:fs';

export interface RawConnection {
  socket: net.Socket;
  /** Everything the server sent so far. */
  received: () => string;
  /** Resolves when the server (or the test) has closed the connection; `error` is a reset or EPIPE. */
  closed: Promise<{ error?: string }>;
}

export function connect(url: string): Promise<RawConnection> {
  const u = new URL(url);
  const socket = net.connect(Number(u.port), u.hostname);
  let data = '';
  socket.on('data', (d) => (data += d.toString('latin1')));
  let error: string | undefined;
  socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
  const closed = new Promise<{ error?: string }>((r) => socket.once('close', () => r({ error })));
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

/** The head of a POST whose body follows separately. */
export function postHead(path: string, contentLength: number, headers: Record<string, string> = {}): string {
  const lines = [`POST ${path} HTTP/1.1`, 'Host: sigil.test', 'Content-Type: application/json', `Content-Length: ${contentLength}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Status line and JSON body of the first answer in `raw`. */
export function parseAnswer(raw: string): { status: number; body: any; headers: string } {
  const m = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(raw);
  if (!m) throw new Error(`no HTTP answer in ${JSON.stringify(raw.slice(0, 200))}`);
  const length = /content-length: *(\d+)/i.exec(m[2]);
  const text = length ? m[3].slice(0, Number(length[1])) : m[3];
  return { status: Number(m[1]), headers: m[2], body: JSON.parse(text) };
}

/** Nanoseconds the process's main thread (the event loop) has spent on a CPU (Linux). */
export function mainThreadCpuNs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
