// Where a serving process's log lines go: stderr, written without ever blocking the event
// loop. pino's own destination writes synchronously and, on a pipe whose reader stalls or has gone,
// retries for ever, freezing request handling and shutdown. Here stderr, when it is a pipe or a
// socket, is written through a non-blocking libuv stream; lines wait in a bounded buffer
// (SIGIL_LOG_BUFFER_BYTES) while the reader is slow, and past that bound, or once the reader has
// gone (EPIPE), they are dropped and counted (sigil_log_lines_dropped_total in /metrics). A file or
// terminal is written through fs's asynchronous stream, bounded the same way.
import { closeSync, constants, createWriteStream, fstatSync, openSync } from 'node:fs';
import net from 'node:net';
import type { Writable } from 'node:stream';

export class LogSink {
  /** Lines dropped because the buffer was full or the reader had gone. */
  dropped = 0;

  private broken = false;

  constructor(
    private readonly out: Writable,
    private readonly maxBufferBytes: number,
  ) {
    out.on('error', () => {
      // EPIPE and the like: nobody reads any more; later lines are counted as dropped.
      this.broken = true;
    });
  }

  /** pino's destination interface: one serialized line. Never blocks, never throws. */
  write(line: string): boolean {
    if (this.broken || this.out.destroyed || this.out.writableLength + Buffer.byteLength(line) > this.maxBufferBytes) {
      this.dropped++;
      return true;
    }
    this.out.write(line);
    return true;
  }

  /** Resolves when the buffered lines are written, or after `ms` when the reader does not take them. */
  flush(ms: number): Promise<void> {
    if (this.broken || this.out.destroyed || this.out.writableLength === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.out.off('drain', done);
        this.out.off('error', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.out.once('drain', done);
      this.out.once('error', done);
    });
  }
}

/**
 * A stream of its own on `fd`. For a pipe, /proc/self/fd/N is opened again (Linux), so that making
 * it non-blocking does not change the pipe end this process shares with its parent or siblings.
 */
function streamOn(fd: number): Writable {
  const stat = fstatSync(fd);
  if (!stat.isFIFO() && !stat.isSocket()) return createWriteStream('', { fd, autoClose: false });
  let own = fd;
  if (stat.isFIFO()) {
    try {
      own = openSync(`/proc/self/fd/${fd}`, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch {
      own = fd; // No /proc, or the reader is already gone: share the descriptor.
    }
  }
  try {
    const socket = new net.Socket({ fd: own, readable: false, writable: true });
    // An open log pipe must not keep a process alive that has nothing else to do.
    socket.unref();
    return socket;
  } catch (err) {
    if (own !== fd) closeSync(own);
    throw err;
  }
}

export function openLogSink(fd: number, maxBufferBytes: number): LogSink {
  return new LogSink(streamOn(fd), maxBufferBytes);
}
