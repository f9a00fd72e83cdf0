// The EncodingOps of each encoding, defined in its codec file and listed once in encoding.cpp.
#pragma once
#include "cells/encoding.h"

namespace tet::cells {
extern const EncodingOps kPlainOps;       // plain.cpp
extern const EncodingOps kConstantOps;    // constant.cpp
extern const EncodingOps kSequenceOps;    // sequence.cpp
extern const EncodingOps kBoolBitsOps;    // bool_bits.cpp
extern const EncodingOps kForOps;         // for.cpp
extern const EncodingOps kDeltaOps;       // delta.cpp
extern const EncodingOps kDictOps;        // dict.cpp
extern const EncodingOps kRleOps;         // rle.cpp
extern const EncodingOps kSym8Ops;        // sym8.cpp
extern const EncodingOps kSym8ForOps;     // sym8.cpp
extern const EncodingOps kViewsOps;       // views.cpp
extern const EncodingOps kDirectoryOps;   // column.cpp
extern const EncodingOps kGlobalDictOps;  // dict.cpp
extern const EncodingOps kDecimalOps;     // decimal.cpp (an extension beyond the spec's thirteen)
extern const EncodingOps kRunDirectoryOps;       // run_directory.cpp (extension; a column root at rest)
extern const EncodingOps kPiecewiseSequenceOps;  // piecewise_sequence.cpp (extension)
extern const EncodingOps kSparseBoolOps;         // sparse_bool.cpp (extension)
extern const EncodingOps kForRadixOps;    // for_radix.cpp (extension)
extern const EncodingOps kGlobalHuffmanOps;  // global_huffman.cpp (extension)
}  // namespace tet::cells
