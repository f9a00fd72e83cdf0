// Public surface of the convert module (re-exported by lib/index.ts).
export { convert, openSource } from './convert';
export { detectSource } from './detect';
export type {
  ConvertOptions, ConvertProgress, ConvertReport, ConvertedDataset, CodecOption, SourceKind,
  SourceReader, SourceVariable,
} from './types';
