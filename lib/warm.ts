// The moment the SDK has answered its first query in this process: by then V8 has compiled the
// functions a query runs (validation, planning, the response), and the package loader
// (lib/loader/sdk-loader.ts) takes its code cache then, so the next process starts with them
// compiled. Told once; the loader writes on a later turn of the event loop (or at exit, if that
// comes first), never inside a query, and schedules nothing where its caches were accepted.
import { loaderHooks } from './loader/hooks';

let answered = false;

/** Marks an answer; the first one tells the loader. Returns `value` (for `.then`). */
export function markAnswered<T>(value: T): T {
  if (!answered) {
    answered = true;
    loaderHooks()?.answered();
  }
  return value;
}
