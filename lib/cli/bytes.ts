// Byte counts for people, as `tet info` and the progress bar print them: 1023 B, 1.50 KiB,
// 960.0 KiB, 12.3 MiB.
/** Binary units, two decimals below 10 and one above. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]}`;
}
