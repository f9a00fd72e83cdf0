// Where the shared specs, fixtures and conformance suite live: $TET_SHARED, else ../shared beside
// the repository root (how CI lays it out). Tests never name an absolute path to it.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The package root. */
export const ROOT = resolve(__dirname, '..', '..');
/** Source writers (Python) of the convert tests. */
export const SOURCES = join(ROOT, 'test', 'support', 'sources');
/** Committed test fixtures (fuzz regressions, ...). */
export const FIXTURES = join(ROOT, 'test', 'fixtures');
export const SHARED = process.env.TET_SHARED ? resolve(process.env.TET_SHARED) : resolve(ROOT, '..', 'shared');

/** Whether the shared tree is there (tests that need it skip without it). */
export const HAVE_SHARED = existsSync(join(SHARED, 'conformance'));
