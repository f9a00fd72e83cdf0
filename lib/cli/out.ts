// The CLI's output: text goes to fds 1 and 2 with fs.writeSync, so a command that prints a few
// lines never creates process.stdout / process.stderr (the first use of either loads node:stream
// and its tree, ~3.5 ms of every `tet` start: docs/performance.md "CLI start-up"). Synchronous, as
// Node's own stdout is for files, pipes and terminals on Linux; a descriptor someone left
// non-blocking (EAGAIN) is waited on and retried; a short write is continued.
// A closed reader (`tet info FILE | head -1`: EPIPE) or a closed descriptor (EBADF) ends the
// program quietly with exit 0, as cat and grep do; the streams, when something else creates them
// (a progress bar, a warning), get the same rule the moment they are created (quietOnClosedPipes).
import { fstatSync, statSync, writeSync } from 'node:fs';

type Sink = (text: string) => void;

let sinks: { out: Sink; err: Sink } | null = null;
let pause: Int32Array | null = null;
let streamsMade = false;  // process.stdout or process.stderr was created (quietOnClosedPipes)

/** Writes all of `text` to `fd`; EPIPE / EBADF exit 0, EAGAIN waits 1 ms and retries. */
function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let at = 0;
  while (at < bytes.length) {
    try {
      at += writeSync(fd, bytes, at, bytes.length - at);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EPIPE' || code === 'EBADF') process.exit(0);
      if (code !== 'EAGAIN') throw err;
      pause ??= new Int32Array(new SharedArrayBuffer(4));
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}

/** Writes `text` to standard output. */
export function writeOut(text: string): void {
  if (sinks) sinks.out(text);
  else writeAll(1, text);
}

/** Writes `text` to standard error. */
export function writeErr(text: string): void {
  if (sinks) sinks.err(text);
  else writeAll(2, text);
}

/** Sends the CLI's output to `to` instead of fds 1 and 2 (in-process tests); null restores them. */
export function redirectCliOutput(to: { out: Sink; err: Sink } | null): void {
  sinks = to;
}

/**
 * Whether `fd` may be a terminal, found without creating its stream: a file, a pipe, a socket or
 * /dev/null is none (fstat); a character device may be, and then only the stream can tell.
 */
export function mayBeTerminal(fd: number): boolean {
  if (process.platform === 'win32') return true;
  try {
    const st = fstatSync(fd);
    return st.isCharacterDevice() && st.rdev !== statSync('/dev/null').rdev;
  } catch {
    return true;
  }
}

/** An 'error' listener that ends quietly on a closed pipe and rethrows anything else. */
function endQuietly(err: NodeJS.ErrnoException): void {
  if (err.code === 'EPIPE' || err.code === 'EBADF' || err.code === 'ERR_STREAM_DESTROYED') process.exit(0);
  throw err;
}

/**
 * The closed-pipe rule for process.stdout and process.stderr, attached when each is first used
 * (their getters are wrapped once): creating them here would cost the start-up this module saves.
 */
export function quietOnClosedPipes(): void {
  for (const name of ['stdout', 'stderr'] as const) {
    const d = Object.getOwnPropertyDescriptor(process, name);
    if (!d || !d.get || !d.configurable) {
      streamsMade = true;
      process[name].on('error', endQuietly);  // not a lazy getter here: attach now
      continue;
    }
    const get = d.get;
    Object.defineProperty(process, name, {
      configurable: true,
      enumerable: d.enumerable,
      get() {
        const stream = get.call(process) as NodeJS.WriteStream;
        streamsMade = true;
        Object.defineProperty(process, name, { configurable: true, enumerable: d.enumerable, get });
        stream.on('error', endQuietly);
        return stream;
      },
    });
  }
}

/**
 * Ends the process with `code` once the command has settled, when everything it printed went out
 * through writeSync: the work V8 and Node still had queued (a young-generation collection that a
 * command's last allocations asked for, ~3 ms of a `tet info` on a machine where fresh memory is
 * slow to touch: docs/performance.md "CLI start-up") would only delay the exit. 'exit' listeners
 * still run (the code caches are written there). Where a stream was created, its writes may still
 * be queued (pipes on Windows are asynchronous): the event loop then ends the process as usual.
 */
export function exitWhenSettled(code: number): void {
  if (sinks || streamsMade) return;
  process.exit(code);
}
