/*
 * tmp_gemm.h: TEMPORARY stand-in for csrc/internal/gemm.h and activation.h (owned by the inner-product engineer),
 * so that the im2col/im2row pieces can be tested against the reference before the shared GEMM lands.
 * Only identity and bias. Deleted as soon as the shared headers are on this branch.
 */
#ifndef SB_CONV_TMP_GEMM_H
#define SB_CONV_TMP_GEMM_H

typedef struct { const float * bias; int bias_per_row; int activation; const float * params; int params_per_row; } sb_epilogue;

static void SB_FN(gemm32f_nn)(size_t M, size_t N, size_t K, const float * A, size_t lda, const float * B, size_t ldb,
    float * C, size_t ldc, const sb_epilogue * ep)
{
    for (size_t i = 0; i < M; ++i) {
        for (size_t j = 0; j < N; ++j) {
            float s = 0;
            for (size_t k = 0; k < K; ++k)
                s += A[i * lda + k] * B[k * ldb + j];
            if (ep && ep->bias)
                s += ep->bias[ep->bias_per_row ? i : j];
            C[i * ldc + j] = s;
        }
    }
}

static void sb_epilogue_block(float * C, size_t ldc, size_t rows, size_t cols, size_t row0, size_t col0,
    const sb_epilogue * e)
{
    if (e && e->bias)
        for (size_t i = 0; i < rows; ++i)
            for (size_t j = 0; j < cols; ++j)
                C[i * ldc + j] += e->bias[e->bias_per_row ? row0 + i : col0 + j];
}

#endif
