// The `--format` names of `tet query` / `tet merge` / `tet qhist run` and their default preview:
// what the commands need when they are registered, apart from the views themselves (format.ts,
// loaded when a response is printed).
export const QUERY_OUTPUT_FORMATS = ['full', 'json', 'stats', 'plan', 'quiet', 'table'] as const;
export type QueryOutputFormat = (typeof QUERY_OUTPUT_FORMATS)[number];

/** Default preview length per format (--preview omitted). */
export function defaultPreviewFor(format: QueryOutputFormat): number {
  return format === 'full' || format === 'json' ? 64 : 0;
}
