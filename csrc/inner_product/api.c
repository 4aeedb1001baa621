/*
 * api.c: the exported functions of the inner-product family.
 *
 * SimdSynetInnerProduct32f*: a context that records the ISA selected at Init and calls that ISA's GEMM
 * (csrc/gemm) for its whole life. C = act(A * B' + bias), as upstream, without upstream's defects:
 * - Forward uses its B argument whenever constB is false (no transB && M == 1 special case);
 * - C is written, never read first;
 * - the bias is applied iff SetParams got a non-NULL bias pointer (the Init flag is informational, as upstream).
 * SetParams packs a constant B into the context (internal = true) and copies bias and params, so the caller's
 * arrays are not read after SetParams returns (callers should still keep them alive: other libraries need it).
 *
 * SimdSynetInnerProductLayerForward: dst = weight * src + bias, through the same GEMM (transposed B, one row).
 * SimdSynetInnerProduct8i: inner_product_8i.dispatch.c.
 */
#include <stdlib.h>
#include <string.h>

#include "simd_synet.h"
#include "internal/kernels.h"
#include "internal/memory.h"


static sb_gemm32f_nn_fn * const gemm_nn_table[SB_ISA_COUNT] = SB_TABLE(gemm32f_nn);
static sb_gemm32f_nt_fn * const gemm_nt_table[SB_ISA_COUNT] = SB_TABLE(gemm32f_nt);
static sb_gemm32f_packed_size_fn * const packed_size_table[SB_ISA_COUNT] = SB_TABLE(gemm32f_packed_size);
static sb_gemm32f_pack_b_fn * const pack_table[SB_ISA_COUNT] = SB_TABLE(gemm32f_pack_b);
static sb_gemm32f_packed_fn * const packed_table[SB_ISA_COUNT] = SB_TABLE(gemm32f_packed);

typedef struct {
    sb_context base;
    int isa;
    size_t M, N, K;
    int transB, constB, activation;
    const float * weight; /* SetParams' weight when it was not packed */
    float * packed;       /* packed constant B, or NULL */
    size_t packed_size;   /* floats */
    float * bias;         /* copy of SetParams' bias (N floats), or NULL */
    float * params;       /* copy of the params the activation reads, or NULL */
    int no_memory;        /* the last SetParams failed for memory: Forward fails (internal/memory.h) */
} ip32f_context;

static void ip32f_release(sb_context * self)
{
    ip32f_context * c = (ip32f_context *)self;
    sb_free(c->packed);
    sb_free(c->bias);
    sb_free(c->params);
    sb_free(c);
}

SIMD_API void * SimdSynetInnerProduct32fInit(size_t M, size_t N, size_t K, SimdBool transB, SimdBool constB,
    SimdBool bias, SimdConvolutionActivationType activation)
{
    (void)bias; /* as upstream: the bias is applied iff SetParams gets a bias pointer, never the Init flag */
    sb_clear_error();
    if ((int)activation < SimdConvolutionActivationIdentity || (int)activation > SimdConvolutionActivationGelu)
        return NULL;
    ip32f_context * c = (ip32f_context *)sb_alloc_zeroed(1, sizeof(ip32f_context));
    if (c == NULL) {
        sb_fail_no_memory();
        return NULL;
    }
    c->base.release = ip32f_release;
    c->isa = sb_isa();
    c->M = M, c->N = N, c->K = K;
    c->transB = transB != SimdFalse, c->constB = constB != SimdFalse, c->activation = (int)activation;
    return c;
}

SIMD_API size_t SimdSynetInnerProduct32fInternalBufferSize(const void * context)
{
    const ip32f_context * c = (const ip32f_context *)context;
    if (c == NULL)
        return 0;
    size_t params = c->params == NULL ? 0 : c->activation == SimdConvolutionActivationPrelu ? c->N : 2;
    return c->packed_size + (c->bias ? c->N : 0) + params;
}

SIMD_API size_t SimdSynetInnerProduct32fExternalBufferSize(const void * context)
{
    (void)context;
    return 0;
}

static float * copy_floats(const float * src, size_t n)
{
    float * dst = (float *)sb_alloc(n, sizeof(float));
    if (dst != NULL && n)
        memcpy(dst, src, n * sizeof(float));
    return dst;
}

SIMD_API void SimdSynetInnerProduct32fSetParams(void * context, const float * weight, SimdBool * internal,
    const float * bias, const float * params)
{
    ip32f_context * c = (ip32f_context *)context;
    sb_clear_error();
    if (internal)
        *internal = SimdFalse;
    if (c == NULL)
        return;
    sb_free(c->packed), c->packed = NULL, c->packed_size = 0;
    sb_free(c->bias), c->bias = NULL;
    sb_free(c->params), c->params = NULL;
    c->weight = weight;
    c->no_memory = 0;
    /* The bias, the params and a constant B (packed) are copied; without memory for a copy SetParams fails (a
       product without its bias or activation would be a wrong result, one on the unpacked B a different one). */
    if (bias) {
        c->bias = copy_floats(bias, c->N);
        c->no_memory |= c->bias == NULL;
    }
    if (params) {
        size_t count = c->activation == SimdConvolutionActivationPrelu ? c->N
            : (c->activation == SimdConvolutionActivationRestrictRange || c->activation == SimdConvolutionActivationHswish
                || c->activation == SimdConvolutionActivationHardSigmoid) ? 2
            : (c->activation == SimdConvolutionActivationLeakyRelu || c->activation == SimdConvolutionActivationElu
                || c->activation == SimdConvolutionActivationMish || c->activation == SimdConvolutionActivationSwish) ? 1
            : 0;
        float * copy = (float *)sb_alloc_zeroed(count > 2 ? count : 2, sizeof(float));
        if (copy != NULL && count)
            memcpy(copy, params, count * sizeof(float));
        c->params = copy;
        c->no_memory |= copy == NULL;
    }
    if (c->no_memory) {
        sb_fail_no_memory();
        return;
    }
    if (c->constB && weight != NULL && c->N && c->K) {
        size_t size = SB_VARIANT(packed_size_table, c->isa)(c->N, c->K);
        /* Required, not optional: the packed product sums in another order than the GEMM on the caller's B. */
        float * packed = (float *)sb_alloc_aligned(64, size, sizeof(float));
        if (packed == NULL) {
            c->no_memory = 1;
            sb_fail_no_memory();
            return;
        }
        SB_VARIANT(pack_table, c->isa)(c->N, c->K, weight, c->transB ? c->K : c->N, c->transB, packed);
        c->packed = packed, c->packed_size = size;
        if (internal)
            *internal = SimdTrue;
    }
}

SIMD_API void SimdSynetInnerProduct32fForward(void * context, const float * A, const float * B, float * buf, float * C)
{
    (void)buf;
    ip32f_context * c = (ip32f_context *)context;
    sb_clear_error();
    if (c == NULL || A == NULL || C == NULL)
        return;
    if (c->no_memory) {
        sb_fail_no_memory();
        return;
    }
    sb_epilogue e = {c->bias, 0, c->activation, c->params, 0};
    if (c->activation != SimdConvolutionActivationIdentity && c->activation != SimdConvolutionActivationRelu
        && c->activation != SimdConvolutionActivationGelu && c->params == NULL)
        e.activation = SimdConvolutionActivationIdentity; /* no params were given: nothing safe to read */
    if (c->constB && c->packed != NULL) {
        SB_VARIANT(packed_table, c->isa)(c->M, c->N, c->K, A, c->K, c->packed, C, c->N, &e);
        return;
    }
    const float * b = c->constB ? c->weight : B;
    if (b == NULL)
        b = c->constB ? B : c->weight;
    if (b == NULL)
        return;
    if (c->transB)
        SB_VARIANT(gemm_nt_table, c->isa)(c->M, c->N, c->K, A, c->K, b, c->K, C, c->N, &e);
    else
        SB_VARIANT(gemm_nn_table, c->isa)(c->M, c->N, c->K, A, c->K, b, c->N, C, c->N, &e);
}

SIMD_API void SimdSynetInnerProductLayerForward(const float * src, const float * weight, const float * bias,
    size_t count, size_t size, float * dst)
{
    sb_epilogue e = {bias, 0, SimdConvolutionActivationIdentity, NULL, 0};
    SB_PICK(gemm_nt_table)(1, count, size, src, size, weight, size, dst, count, &e);
}

static sb_inner_product_8i_fn * const ip8i_table[SB_ISA_COUNT] = SB_TABLE(inner_product_8i);

/* Precise when (compatibility & 12) == 0 (SimdSynetCompatibility8iPrecise), pairwise int16 saturation otherwise;
   this library honours the flag (upstream's default build always saturates). */
SIMD_API void SimdSynetInnerProduct8i(size_t M, size_t N, size_t K, const uint8_t * src, const int8_t * weight,
    int32_t * dst, SimdSynetCompatibilityType compatibility)
{
    int precise = ((int)compatibility & SimdSynetCompatibility8iMask) == 0;
    SB_PICK(ip8i_table)(M, N, K, src, weight, dst, precise);
}
