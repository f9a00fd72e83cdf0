// The progress throttle of every onProgress (lib/progress.ts) on a fake clock, and the CLI's
// bar (lib/cli/progress.ts) drawn into a fake TTY stream: the delay, the fields, the erase.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ProgressThrottle, PROGRESS_INTERVAL_MS, type Progress } from '../../lib/progress';
import {
  formatDuration, progressBar, progressDelayMs, progressFields, ProgressBar, PROGRESS_DELAY_MS,
} from '../../lib/cli/progress';
import { formatBytes } from '../../lib/cli/bytes';

describe('ProgressThrottle', () => {
  it('calls at most once per interval, only when the count moved, clamped and monotone', () => {
    let t = 0;
    const seen: Progress[] = [];
    const th = new ProgressThrottle((p) => seen.push(p), () => t);
    th.update(0, 0);            // total not known yet: nothing
    th.update(10, 100);         // first call
    t = 50; th.update(20, 100); // too soon
    t = 99; th.update(30, 100); // still too soon
    t = 100; th.update(30, 100); // 100 ms after the first: called
    t = 250; th.update(30, 100); // unchanged: not called
    t = 300; th.update(5, 100);  // a smaller count never goes back
    t = 400; th.update(150, 100); // past the total: clamped
    t = 401; th.finish(100);      // the final call, whatever the clock
    expect(seen.map((p) => [p.bytesDone, p.bytesTotal, p.fraction])).toEqual([
      [10, 100, 0.1], [30, 100, 0.3], [100, 100, 1], [100, 100, 1],
    ]);
    expect(PROGRESS_INTERVAL_MS).toBe(100);
  });

  it('finish on an empty operation reports 0 of 0 as fraction 1; extra fields ride along', () => {
    const seen: (Progress & { dataset: string })[] = [];
    const th = new ProgressThrottle<Progress & { dataset: string }>((p) => seen.push(p), () => 0);
    th.finish(0, { dataset: 'a' });
    expect(seen).toEqual([{ dataset: 'a', bytesDone: 0, bytesTotal: 0, fraction: 1 }]);
  });

  it('a throwing callback is reported once as a warning and keeps being called', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      let t = 0, calls = 0;
      const th = new ProgressThrottle(() => { calls++; throw new Error('nope'); }, () => t);
      th.update(1, 10);
      t = 200; th.update(2, 10);
      th.finish(10);
      expect(calls).toBe(3);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0][0])).toMatch(/nope/);
      expect(warn.mock.calls[0][1]).toMatchObject({ code: 'TET_PROGRESS_CALLBACK' });
    } finally {
      warn.mockRestore();
    }
  });
});

describe('bar fields', () => {
  it('formats bytes (as tet info), durations, rate and ETA', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1536)).toBe('1.50 KiB');
    expect(formatBytes(12.34 * 2 ** 20)).toBe('12.3 MiB');
    expect(formatBytes(512 * 2 ** 30)).toBe('512.0 GiB');
    expect(formatDuration(45.4)).toBe('45s');
    expect(formatDuration(185)).toBe('3m05s');
    expect(formatDuration(7620)).toBe('2h07m');
    expect(formatDuration(NaN)).toBe('?');
    // 64 MiB of 256 MiB in 2 s: 32 MiB/s, 192 MiB left -> 6 s
    expect(progressFields(64 * 2 ** 20, 256 * 2 ** 20, 2000)).toEqual({ done: '64.0 MiB', total: '256.0 MiB', rate: '32.0 MiB/s', eta: '6s' });
    expect(progressFields(0, 100, 0)).toEqual({ done: '0 B', total: '100 B', rate: '?/s', eta: '?' });
  });

  it('TET_PROGRESS_DELAY_MS sets the delay; anything but digits keeps the default', () => {
    expect(progressDelayMs({})).toBe(PROGRESS_DELAY_MS);
    expect(progressDelayMs({ TET_PROGRESS_DELAY_MS: '0' })).toBe(0);
    expect(progressDelayMs({ TET_PROGRESS_DELAY_MS: '1500' })).toBe(1500);
    expect(progressDelayMs({ TET_PROGRESS_DELAY_MS: '-1' })).toBe(PROGRESS_DELAY_MS);
  });
});

/** A writable that says it is a terminal and keeps what was written. */
function fakeTty(isTTY = true) {
  const chunks: string[] = [];
  const stream = new Writable({ write(chunk, _enc, cb) { chunks.push(String(chunk)); cb(); } }) as Writable & { isTTY?: boolean; columns?: number };
  stream.isTTY = isTTY;
  stream.columns = 120;
  return { stream, text: () => chunks.join('') };
}
const plain = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, '');

describe('ProgressBar', () => {
  afterEach(() => { vi.useRealTimers(); });

  it('draws nothing before the delay, then bytes, rate and ETA; stop erases it', () => {
    let t = 0;
    const tty = fakeTty();
    const bar = new ProgressBar({ stream: tty.stream, now: () => t, delayMs: 500 });
    t = 100; bar.update({ bytesDone: 1 << 20, bytesTotal: 8 << 20 });
    expect(tty.text()).toBe('');
    expect(bar.shown).toBe(false);
    t = 1000; bar.update({ bytesDone: 2 << 20, bytesTotal: 8 << 20 }, 'temp');
    expect(bar.shown).toBe(true);
    // 2 MiB in 1 s: 2 MiB/s, 6 MiB left -> 3 s
    expect(plain(tty.text())).toMatch(/25% \| 2\.00 MiB \/ 8\.00 MiB \| 2\.00 MiB\/s \| ETA 3s \| temp/);
    const before = tty.text().length;
    bar.stop();
    const tail = tty.text().slice(before);
    expect(tail).toContain('\x1b[2K');     // the line is cleared (clearOnComplete)
    expect(tty.text()).not.toContain('\x1b[?25l');  // the cursor was never hidden (Ctrl-C safe)
    expect(plain(tail).trim()).toBe('');
    bar.stop();
    bar.update({ bytesDone: 3, bytesTotal: 8 });  // after stop: nothing
    expect(tty.text().length).toBe(before + tail.length);
  });

  it('an early event is drawn when the delay ends even if no other event comes', () => {
    vi.useFakeTimers();
    let t = 0;
    const tty = fakeTty();
    const bar = new ProgressBar({ stream: tty.stream, now: () => t, delayMs: 500 });
    t = 50; bar.update({ bytesDone: 10, bytesTotal: 100 });
    expect(bar.shown).toBe(false);
    t = 500; vi.advanceTimersByTime(450);
    expect(bar.shown).toBe(true);
    expect(plain(tty.text())).toMatch(/10% \| 10 B \/ 100 B/);
    bar.stop();
  });

  it('a stop before the delay draws nothing at all (short operations print nothing)', () => {
    vi.useFakeTimers();
    const tty = fakeTty();
    const bar = new ProgressBar({ stream: tty.stream, now: () => 0, delayMs: 500 });
    bar.update({ bytesDone: 10, bytesTotal: 100 });
    bar.stop();
    vi.advanceTimersByTime(1000);
    expect(tty.text()).toBe('');
  });

  it('progressBar() gives none when disabled or when the stream is no terminal', () => {
    expect(progressBar(false, { stream: fakeTty().stream })).toBeNull();
    expect(progressBar(true, { stream: fakeTty(false).stream })).toBeNull();
    expect(progressBar(true, { stream: fakeTty().stream })).toBeInstanceOf(ProgressBar);
  });
});
