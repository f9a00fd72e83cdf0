// The tables layer's TypeScript side: the column contract, value codecs, column normalisation.
export * from './types';
export * from './values';
export * from './normalize';
export { Utf8BatchBuilder, firstInvalidUtf8Row } from './utf8';
