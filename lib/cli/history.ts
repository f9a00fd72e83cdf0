// Client-side query history (`tet qhist`): recent query documents as JSONL in the platform
// cache ($XDG_CACHE_HOME or ~/.cache)/tetration/query_history.jsonl, oldest first in the file,
// rotated to the newest TET_QUERY_HISTORY_MAX entries (default 50, as the reference; 0 disables
// recording, as does TET_NO_QUERY_HISTORY=1). A query equal to the newest entry (same document,
// file and mode) is not recorded again. Never touches .tet files.
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import type { QueryDocument } from '../index';
import { homeDir } from '../user-dirs';

export interface QueryHistoryEntry {
  /** ISO-8601 time of the run. */
  at: string;
  /** Absolute .tet path, or null when the query was only validated. */
  tet: string | null;
  execute: boolean;
  query: QueryDocument;
}

export const DEFAULT_HISTORY_MAX = 50;

export function historyPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(homeDir(), '.cache');
  return join(base, 'tetration', 'query_history.jsonl');
}

export function historyMax(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TET_QUERY_HISTORY_MAX;
  if (raw === undefined || raw.trim() === '') return DEFAULT_HISTORY_MAX;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n >= 0 ? n : DEFAULT_HISTORY_MAX;
}

/** TET_NO_QUERY_HISTORY set to 1 / true / yes: nothing is recorded. */
export function historyDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(1|true|yes|on)$/i.test((env.TET_NO_QUERY_HISTORY ?? '').trim());
}

/** Recording settings, as `qhist list --json` reports them. */
export function historySettings(env: NodeJS.ProcessEnv = process.env): { path: string; max: number; recording: boolean;
  disabled_by: string | null } {
  const max = historyMax(env);
  const disabledBy = historyDisabled(env) ? 'TET_NO_QUERY_HISTORY=1' : max === 0 ? 'TET_QUERY_HISTORY_MAX=0' : null;
  return { path: historyPath(env), max, recording: disabledBy === null, disabled_by: disabledBy };
}

/** `x` for a run with -x (executed), `plan` for a plan-only or validate-only one. */
export function entryMode(e: QueryHistoryEntry): 'x' | 'plan' {
  return e.execute ? 'x' : 'plan';
}

function sameQuery(a: QueryHistoryEntry, b: QueryHistoryEntry): boolean {
  return a.tet === b.tet && a.execute === b.execute && JSON.stringify(a.query) === JSON.stringify(b.query);
}

/** Deletes the history; returns how many entries it held. */
export function clearHistory(env: NodeJS.ProcessEnv = process.env): number {
  const n = readHistory(env).length;
  rmSync(historyPath(env), { force: true });
  return n;
}

function isEntry(v: unknown): v is QueryHistoryEntry {
  const e = v as QueryHistoryEntry;
  return !!e && typeof e === 'object' && typeof e.at === 'string' && (e.tet === null || typeof e.tet === 'string')
    && typeof e.execute === 'boolean' && !!e.query && typeof e.query === 'object';
}

/** Entries oldest first; unreadable lines are skipped. */
export function readHistory(env: NodeJS.ProcessEnv = process.env): QueryHistoryEntry[] {
  const file = historyPath(env);
  if (!existsSync(file)) return [];
  const out: QueryHistoryEntry[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line);
      if (isEntry(v)) out.push(v);
    } catch {
      // a torn or foreign line: ignore it
    }
  }
  return out;
}

/** Appends one entry and rotates; best-effort (history must never fail a query). */
export function appendHistory(entry: QueryHistoryEntry, env: NodeJS.ProcessEnv = process.env): void {
  const max = historyMax(env);
  if (max === 0 || historyDisabled(env)) return;
  const file = historyPath(env);
  try {
    const last = readHistory(env).at(-1);
    if (last && sameQuery(last, entry)) return;  // consecutive duplicate: recorded once
    mkdirSync(dirname(file), { recursive: true });
    appendFileSync(file, JSON.stringify(entry) + '\n');
    const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim());
    if (lines.length > max) {
      // Rewrite atomically so a concurrent reader never sees a half-written file.
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, lines.slice(lines.length - max).join('\n') + '\n');
      renameSync(tmp, file);
    }
  } catch {
    // cache dir not writable: skip recording
  }
}
