// Public API of the tetration package. Everything a user imports comes from here; internal
// modules (binding, plan encoding, native contract) stay private.
export { open, openSync, TetFile } from './file';
export type { OpenOptions, ReadResult, FileLayout, FooterInfo } from './file';
export { TetWriter } from './writer';
export type { DatasetSpec, WriterOptions, WriteCodec, HistoryInput } from './writer';
export {
  TetError, TetQueryError, TetFormatError, TetBudgetError, TetIoError, TetCancelledError, TetDeviceError,
  ERROR_CODES, isTetError,
} from './errors';
export type { KnownErrorCode } from './errors';
export { hostInfo } from './host';
export { DTYPE_BY_TAG, DTYPE_TAG, DTYPE_SIZE } from './types';
export type * from './types';
