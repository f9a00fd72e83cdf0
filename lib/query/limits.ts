// Hard caps on query input (spec: JSON security — input protections).

/** Hard caps on query input, checked before and while parsing (docs/security.md). */
export const QUERY_LIMITS = {
  /** Bytes of JSON or TOML text. */
  maxInputBytes: 1 << 20,
  /** Nesting depth of the parsed value tree (objects + arrays). */
  maxDepth: 64,
  maxDatasetNameLength: 1024,
  maxLabelLength: 4096,
  maxAxisTokenLength: 256,
  /** MAX_NDIM of layout v1: selection rank and axis-list length. */
  maxNdim: 8,
  maxSpillPathLength: 4096,
} as const;
