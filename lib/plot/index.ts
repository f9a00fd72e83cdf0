// Pictures of query results (lib/plot/README.md).
export { renderPlot } from './render';
export { plotSpec, PADDING as PLOT_PADDING } from './spec';
export type { PlotOptions, PlotSpec, PlotPadding } from './spec';
