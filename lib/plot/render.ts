// Renders a response's picture: the Vega specification of spec.ts through Vega's headless SVG
// renderer (no canvas build), and PNG by rasterising that SVG with sharp (librsvg). Both are
// loaded on first use, so `require('tetration')` pays for neither.
import { TetError } from '../errors';
import type { QueryResponse } from '../response/types';
import { plotSpec, type PlotOptions } from './spec';
import { importEsm } from '../esm';

interface VegaModule {
  parse(spec: unknown): unknown;
  View: new (runtime: unknown, opts: { renderer: string }) => { toSVG(): Promise<string>; finalize(): void };
}
type SharpFactory = (input: Buffer, opts?: { density?: number }) => { png(): { toBuffer(): Promise<Buffer> } };

let vega: Promise<VegaModule> | undefined;
let sharp: Promise<SharpFactory> | undefined;

function missing(lib: string, why: string, err: unknown): TetError {
  const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
  return new TetError('TET_PLOT_DEPENDENCY', `${lib} is needed ${why} but could not be loaded (${reason}); install it with \`npm install ${lib}\``, { cause: err });
}

function loadVega(): Promise<VegaModule> {
  vega ??= importEsm<unknown>('vega').then((m) => ((m as { default?: VegaModule }).default ?? m) as unknown as VegaModule)
    .catch((err) => { vega = undefined; throw missing('vega', 'to draw pictures', err); });
  return vega;
}

function loadSharp(): Promise<SharpFactory> {
  sharp ??= importEsm<unknown>('sharp').then((m) => ((m as { default?: SharpFactory }).default ?? m) as unknown as SharpFactory)
    .catch((err) => { sharp = undefined; throw missing('sharp', 'for PNG pictures (SVG works without it)', err); });
  return sharp;
}

/** The picture of an executed query's result: SVG text, or PNG bytes with `{ format: 'png' }`. */
export async function renderPlot(response: QueryResponse, opts: PlotOptions & { format: 'png' }): Promise<Uint8Array>;
export async function renderPlot(response: QueryResponse, opts?: PlotOptions & { format?: 'svg' }): Promise<string>;
export async function renderPlot(response: QueryResponse, opts?: PlotOptions): Promise<string | Uint8Array>;
export async function renderPlot(response: QueryResponse, opts: PlotOptions = {}): Promise<string | Uint8Array> {
  const format = opts.format ?? 'svg';
  if (format !== 'svg' && format !== 'png') {
    throw new TetError('TET_PLOT_BAD_OPTION', `plot format must be 'svg' or 'png', found ${JSON.stringify(format)}`);
  }
  const spec = plotSpec(response, opts);
  const v = await loadVega();
  const view = new v.View(v.parse(spec.vega), { renderer: 'none' });
  let svg: string;
  try {
    svg = await view.toSVG();
  } finally {
    view.finalize();
  }
  if (format === 'svg') return svg;
  const s = await loadSharp();
  const png = await s(Buffer.from(svg), { density: 72 }).png().toBuffer();
  return new Uint8Array(png.buffer, png.byteOffset, png.byteLength);
}
