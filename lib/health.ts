// File health (layout_v1.md "File health"): verify() checks structure (the full parse done by
// open), decodes tiles, cross-checks tensor byte counts and the footer metadata; repair()
// applies a recommendation verify() made (today: footer_invalid).
import { binding } from './binding';
import { TetQueryError, toTetError } from './errors';
import { open, openedStrictly, type TetFile } from './file';
import { DTYPE_SIZE } from './types';

/** Severity of a {@link VerifyFinding}: errors make `ok` false. */
export type Severity = 'error' | 'warning';

/** One problem found by {@link verify}. */
export interface VerifyFinding {
  severity: Severity;
  /** TET_* error code. */
  code: string;
  /** A repair() code that fixes it ('footer_invalid'), or '' when none. */
  recommendation: string;
  message: string;
}

/** Options of {@link verify}. */
export interface VerifyOptions {
  /** Decode every chunk instead of the first ones (QUICK_DECODE_CHUNKS, QUICK_DECODE_BYTES). */
  deep?: boolean;
}

/** What {@link verify} returns (and `tet verify --json` prints). */
export interface VerifyReport {
  path: string;
  /** No error-severity findings. */
  ok: boolean;
  /** Structure (superblock, directory, index, payload bounds) parsed. */
  structureOk: boolean;
  deep: boolean;
  datasets: number;
  chunksTotal: number;
  chunksDecoded: number;
  footer: 'absent' | 'valid' | 'invalid';
  /** Tables stored in the file (0 when none, or when its tables region cannot be read). */
  tables: number;
  findings: VerifyFinding[];
}

/** A fix {@link repair} can apply. */
export type RepairCode = 'footer_invalid' | 'cells_invalid';
/** Every {@link RepairCode}. */
export const REPAIR_CODES: readonly RepairCode[] = ['footer_invalid', 'cells_invalid'];

/** What {@link repair} returns. */
export interface RepairResult {
  path: string;
  applied: RepairCode;
  /** File length after the repair. */
  newLength: number;
}

/** Chunks decoded by a quick (non-deep) verify, at most. */
export const QUICK_DECODE_CHUNKS = 128;
/**
 * A quick verify decodes no more of the first chunks than this many bytes of compressed tiles
 * hold decoded (counted at the largest compressed tile of the file; at least one chunk): 128
 * zstd tiles of 16 MiB took `tet info` 1.7 s on a 2-core VM, its first 4 under 0.1 s.
 */
export const QUICK_DECODE_BYTES = 64 * 1024 * 1024;

/** How many of the first chunks a quick verify decodes (QUICK_DECODE_CHUNKS, QUICK_DECODE_BYTES). */
function quickDecodeCount(file: TetFile, total: number): number {
  let largest = 0;  // bytes of the largest tile that is decoded to be checked (raw ones are not)
  for (const d of file.datasets) {
    if (!d.codecs.zstd) continue;
    largest = Math.max(largest, d.chunkShape.reduce((n, e) => n * e, DTYPE_SIZE[d.dtype]));
  }
  const byBytes = largest > 0 ? Math.max(1, Math.floor(QUICK_DECODE_BYTES / largest)) : Infinity;
  return Math.min(QUICK_DECODE_CHUNKS, byBytes, total);
}

/**
 * Checks a file (what `tet verify` prints), by path or already open: structure, bounds, decode of
 * the first tiles ({@link QUICK_DECODE_CHUNKS} at most, and no more than
 * {@link QUICK_DECODE_BYTES} of compressed tiles decoded; all with `deep`), tensor-bytes
 * cross-check and footer, as findings with recommendation codes. Damage is reported as findings
 * (`ok: false`), not thrown.
 */
export async function verify(target: string | TetFile, opts: VerifyOptions = {}): Promise<VerifyReport> {
  const deep = opts.deep ?? false;
  // An open TetFile that passed the strict open (structure and footer) is checked as it is and
  // stays open (`tet info` verifies the file it shows without opening it twice); one opened with
  // `verifyFooter: false` is verified from its path.
  const given = typeof target === 'string' || !openedStrictly(target) ? null : target;
  const path = typeof target === 'string' ? target : target.path;
  const report: VerifyReport = {
    path, ok: false, structureOk: false, deep, datasets: 0, chunksTotal: 0, chunksDecoded: 0, footer: 'absent', tables: 0, findings: [],
  };
  const file = given ?? await openForVerify(path, report);
  if (!file) return finish(report);
  try {
    report.structureOk = true;
    report.datasets = file.datasets.length;
    report.chunksTotal = file.datasets.reduce((n, d) => n + d.chunkCount, 0);
    if (report.footer !== 'invalid') report.footer = file.layout.footer.present ? 'valid' : 'absent';
    report.chunksDecoded = deep ? report.chunksTotal : quickDecodeCount(file, report.chunksTotal);
    try {
      report.findings.push(...await binding().verify(file.native, 0, report.chunksDecoded, deep));
    } catch (err) {
      throw toTetError(err);
    }
    if (!report.findings.some((f) => f.recommendation === 'cells_invalid')) report.tables = file.tables.length;
    crossCheckTensorBytes(file, report.findings);
    checkFooterMetadata(file, report.findings);
  } finally {
    if (!given) file.close();
  }
  return finish(report);
}

/** Applies one recommendation of verify() to the file in place (atomically). */
export async function repair(path: string, code: string): Promise<RepairResult> {
  if (!(REPAIR_CODES as readonly string[]).includes(code)) {
    throw new TetQueryError('TET_QUERY_REPAIR_CODE', `unknown repair ${JSON.stringify(code)}; known: ${REPAIR_CODES.join(', ')}`);
  }
  const report = await verify(path);
  if (!report.findings.some((f) => f.recommendation === code)) {
    const applicable = [...new Set(report.findings.map((f) => f.recommendation).filter(Boolean))];
    throw new TetQueryError('TET_QUERY_REPAIR_NOT_APPLICABLE',
      `repair ${code} does not apply to ${path} (verify recommends: ${applicable.join(', ') || 'nothing'})`);
  }
  try {
    const { newLength } = code === 'cells_invalid' ? await binding().repairCells(path) : await binding().repairFooter(path);
    return { path, applied: code as RepairCode, newLength };
  } catch (err) {
    throw toTetError(err);
  }
}

function finish(report: VerifyReport): VerifyReport {
  report.ok = !report.findings.some((f) => f.severity === 'error');
  return report;
}

// Opens strictly; a footer-only failure becomes a repairable finding and the file is reopened
// without footer checks so the rest can still be verified.
async function openForVerify(path: string, report: VerifyReport): Promise<TetFile | null> {
  try {
    return await open(path);
  } catch (err) {
    const e = toTetError(err);
    if (!e.code.startsWith('TET_FOOTER_')) {
      report.findings.push({ severity: 'error', code: e.code, recommendation: '', message: e.message });
      return null;
    }
    report.footer = 'invalid';
    report.findings.push({
      severity: 'error', code: e.code, recommendation: 'footer_invalid',
      message: `${e.message} (the chunk data is intact; the footer can be dropped)`,
    });
    try {
      return await open(path, { verifyFooter: false });
    } catch (err2) {
      const e2 = toTetError(err2);
      report.findings.push({ severity: 'error', code: e2.code, recommendation: '', message: e2.message });
      return null;
    }
  }
}

function crossCheckTensorBytes(file: TetFile, findings: VerifyFinding[]): void {
  for (const d of file.datasets) {
    const elements = d.shape.reduce((a, b) => a * b, 1);
    const want = elements * DTYPE_SIZE[d.dtype];
    if (d.logicalBytes !== want) {
      findings.push({ severity: 'error', code: 'TET_PAYLOAD_TENSOR_BYTES', recommendation: '',
        message: `dataset ${JSON.stringify(d.name)}: tiles hold ${d.logicalBytes} logical bytes, shape ${JSON.stringify(d.shape)} x ${DTYPE_SIZE[d.dtype]} B needs ${want}` });
    }
    if (d.codecs.zstd === 0 && d.storedBytes !== want) {
      findings.push({ severity: 'error', code: 'TET_PAYLOAD_TENSOR_BYTES', recommendation: '',
        message: `dataset ${JSON.stringify(d.name)}: raw tiles store ${d.storedBytes} bytes, the tensor needs ${want}` });
    }
  }
}

function checkFooterMetadata(file: TetFile, findings: VerifyFinding[]): void {
  const perDataset = file.metadata.datasets;
  if (!perDataset || typeof perDataset !== 'object') return;
  const warn = (message: string) => findings.push({ severity: 'warning', code: 'TET_FOOTER_METADATA', recommendation: '', message });
  for (const [name, meta] of Object.entries(perDataset)) {
    const d = file.datasets.find((x) => x.name === name);
    if (!d) {
      warn(`footer metadata names dataset ${JSON.stringify(name)}, which the file does not hold`);
      continue;
    }
    const dims = meta?.dim_names;
    if (dims !== undefined && (!Array.isArray(dims) || dims.length !== d.shape.length)) {
      warn(`dataset ${JSON.stringify(name)}: dim_names ${JSON.stringify(dims)} should list ${d.shape.length} names`);
    }
    for (const [key, coord] of Object.entries(meta?.coords ?? {})) {
      const axis = Array.isArray(dims) && dims.includes(key) ? dims.indexOf(key) : /^\d+$/.test(key) ? Number(key) : -1;
      const labels = (coord as { labels?: unknown })?.labels;
      if (axis < 0 || axis >= d.shape.length) warn(`dataset ${JSON.stringify(name)}: coords key ${JSON.stringify(key)} is neither a dim name nor an axis`);
      else if (!Array.isArray(labels) || labels.length !== d.shape[axis]) {
        warn(`dataset ${JSON.stringify(name)}: coords ${JSON.stringify(key)} has ${Array.isArray(labels) ? labels.length : 'no'} labels, axis ${axis} has length ${d.shape[axis]}`);
      }
    }
  }
}
