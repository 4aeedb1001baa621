/*
 * gemm.h: the bundled float32 GEMM (owned by the inner-product family, used by the convolution). Implemented in
 * csrc/gemm/gemm.dispatch.c, one variant per ISA: a kernel source calls SB_FN(gemm32f_nn) (its own ISA's), an API
 * file a variant from SB_TABLE(gemm32f_nn).
 *
 * All matrices are row-major float32. C is written, never read before it is written. Multithreaded with
 * sb_parallel_for (SimdSetThreadNumber) when the work is large enough. epilogue may be NULL (identity, no bias).
 */
#ifndef SB_GEMM_H
#define SB_GEMM_H

#include <stddef.h>

#include "internal/dispatch.h"
#include "internal/epilogue.h"

/* C[M][N] (ldc) = epilogue(A[M][K] (lda) * B[K][N] (ldb)). */
SB_KERNEL(gemm32f_nn, void(size_t M, size_t N, size_t K, const float * A, size_t lda, const float * B, size_t ldb,
    float * C, size_t ldc, const sb_epilogue * epilogue));

/* gemm32f_nn on the calling thread only, for callers that already split their work with sb_parallel_for
   (nested calls of the threaded variants would start threads from every worker). Same results. */
SB_KERNEL(gemm32f_nn_serial, void(size_t M, size_t N, size_t K, const float * A, size_t lda, const float * B,
    size_t ldb, float * C, size_t ldc, const sb_epilogue * epilogue));

/* C[M][N] (ldc) = epilogue(A[M][K] (lda) * B'), B stored as [N][K] (ldb): C[i][j] = sum_k A[i][k] * B[j][k]. */
SB_KERNEL(gemm32f_nt, void(size_t M, size_t N, size_t K, const float * A, size_t lda, const float * B, size_t ldb,
    float * C, size_t ldc, const sb_epilogue * epilogue));

/* Packed B for constant weights. The layout belongs to the ISA that packed it: use the three functions of one ISA.
   gemm32f_packed_size: floats needed for a packed K x N matrix (the caller allocates, 64-byte alignment is best).
   gemm32f_pack_b: packs B, given as [K][N] (transB == 0) or [N][K] (transB != 0) with leading dimension ldb.
   gemm32f_packed: C[M][N] (ldc) = epilogue(A[M][K] (lda) * packed B). */
SB_KERNEL(gemm32f_packed_size, size_t(size_t N, size_t K));
SB_KERNEL(gemm32f_pack_b, void(size_t N, size_t K, const float * B, size_t ldb, int transB, float * packed));
SB_KERNEL(gemm32f_packed, void(size_t M, size_t N, size_t K, const float * A, size_t lda, const float * packed,
    float * C, size_t ldc, const sb_epilogue * epilogue));

/* A sum of T GEMMs over one packed B (an implicit im2row, for the direct convolution), on the calling thread:
   C[M][N] (ldc) = epilogue(sum over t of A_t[M][Kt] * rows [t*Kt, (t+1)*Kt) of packed B (K = T*Kt rows, packed by
   gemm32f_pack_b)), where (i, k) of A_t is taps[t][i * lda + k * ldk] (an NHWC source: ldk = 1; NCHW: ldk = the
   plane size); a NULL tap is skipped (its rows of A are zeros). The sums run over the taps in order, in registers. */
SB_KERNEL(gemm32f_packed_taps_serial, void(size_t M, size_t N, size_t T, const float * const * taps, size_t lda,
    size_t ldk, size_t Kt, const float * packed, float * C, size_t ldc, const sb_epilogue * epilogue));

/* B given as compact column panels, for callers that build B themselves (the NCHW convolution writes its im2col
   this way): with W = gemm32f_panel_width() (this ISA's), columns [p*W, p*W + w) of B, w = min(W, N - p*W), are
   stored at panels + p*K*W as [K][w] (the last panel is narrower, not padded: K*N floats in all).
   gemm32f_panels_serial: C[M][N] (ldc) = epilogue(A[M][K] (lda) * B), on the calling thread only. */
SB_KERNEL(gemm32f_panel_width, size_t(void));
SB_KERNEL(gemm32f_panels_serial, void(size_t M, size_t N, size_t K, const float * A, size_t lda, const float * panels,
    float * C, size_t ldc, const sb_epilogue * epilogue));

#endif /* SB_GEMM_H */
