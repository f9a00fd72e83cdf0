// Dataset names -> Zarr v3 node paths. A .tet name is any non-empty UTF-8 string; a Zarr node name
// must be non-empty, not `.` / `..`, must not start with `__` (reserved), and every node is either
// an array or a group. Names that are already legal, portable paths are kept; others are mapped
// to a legal path (the original name travels in the array's `tetration_name` attribute, which
// `tet convert` reads back), so an export never fails on a name.

/** Attribute holding the .tet dataset name when the node path differs from it. */
export const NAME_ATTR = 'tetration_name';

/** Characters kept out of node names: controls, and those that are not portable across file systems. */
const UNSAFE = /[\u0000-\u001f\u007f\\:*?"<>|]/u;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'gu');
const MAX_SEGMENT_BYTES = 200;

/** Whether `segment` can be used as it is. */
export function legalSegment(segment: string): boolean {
  return segment !== '' && segment !== '.' && segment !== '..' && !segment.startsWith('__') && segment !== 'zarr.json'
    && !UNSAFE.test(segment) && Buffer.byteLength(segment) <= MAX_SEGMENT_BYTES;
}

/** A legal node name close to `segment`: unsafe characters as `_`, reserved forms prefixed with `_`. */
export function legalizeSegment(segment: string): string {
  if (legalSegment(segment)) return segment;
  let s = segment.replace(UNSAFE_ALL, '_');
  if (s === '' || s === '.' || s === '..' || s.startsWith('__') || s === 'zarr.json') s = `_${s}`;
  if (s.startsWith('__')) s = `x${s}`;
  while (Buffer.byteLength(s) > MAX_SEGMENT_BYTES) s = s.slice(0, -1);
  return s;
}

/**
 * One node path per dataset name, all distinct, no array on the path of another node. Legal names
 * are placed first (deeper ones before shallower, so groups keep their names), so they keep their
 * paths; a name whose path is taken (as an array, or as the group of another array) gets `~2`,
 * `~3`, ... on the conflicting segment.
 */
export function zarrNodePaths(names: readonly string[]): Map<string, string> {
  const arrays = new Set<string>();
  const groups = new Set<string>(['']);
  const out = new Map<string, string>();
  const depth = (n: string) => n.split('/').length;
  const order = [...names].sort((a, b) => Number(!isLegalPath(a)) - Number(!isLegalPath(b)) || depth(b) - depth(a));
  const claim = (wanted: string[]): string => {
    const parts: string[] = [];
    for (let i = 0; i < wanted.length; i++) {
      const last = i === wanted.length - 1;
      let seg = wanted[i];
      for (let k = 2; ; k++) {
        const p = [...parts, seg].join('/');
        if (last ? !arrays.has(p) && !groups.has(p) : !arrays.has(p)) break;
        seg = `${wanted[i]}~${k}`;
      }
      parts.push(seg);
    }
    for (let i = 1; i < parts.length; i++) groups.add(parts.slice(0, i).join('/'));
    const p = parts.join('/');
    arrays.add(p);
    return p;
  };
  for (const n of order) out.set(n, claim(n.split('/').map(legalizeSegment)));
  return out;
}

function isLegalPath(name: string): boolean {
  return name.split('/').every(legalSegment);
}

/** Every group path (without '' for the root) that the node paths need. */
export function groupPaths(paths: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const p of paths) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) out.add(parts.slice(0, i).join('/'));
  }
  return out;
}
