// Shared prelude of the kernel translation units (kernels.cpp, row_kernels_impl.h): one
// always_inline body per kernel, wrapped per ISA with target attributes (the body inherits the
// caller's ISA). Include it FIRST. No fused multiply-add anywhere: contraction would make the
// SIMD builds round differently from the scalar reference.
#pragma once
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#if defined(__x86_64__) || defined(__i386__)
#define TET_X86 1
#define TET_AVX2 __attribute__((target("avx2")))
#define TET_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))
#endif
#define TET_INLINE inline __attribute__((always_inline))
