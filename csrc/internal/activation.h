/*
 * activation.h: bias + activation (SimdConvolutionActivationType) for *.dispatch.c sources, per ISA.
 *
 * Owned by the inner-product family; used by the GEMM epilogue (internal/gemm.h) and by the convolution.
 *
 *   sb_activate(x, activation, p0, p1)   one vector, bias already added; p0/p1 are the first and second parameter
 *                                        broadcast to every lane (prelu: p0 holds each lane's own slope).
 *   sb_epilogue_block(C, ldc, rows, cols, row0, col0, e)
 *                                        in place over a rows x cols block of C: x = C + bias, C = act(x); block
 *                                        element (i, j) is output element (row0 + i, col0 + j), which is what bias
 *                                        and prelu slopes are indexed by (per column, or per row when *_per_row).
 *
 * Formulas (Max(a, b) = a > b ? a : b, Min(a, b) = a < b ? a : b, as upstream's Base):
 *   Relu Max(0,x); LeakyRelu Max(0,x) + p0*Min(x,0); RestrictRange Min(Max(p0, x), p1); Prelu as LeakyRelu with the
 *   column's (or row's) slope; Elu x >= 0 ? x : p0*(exp(x) - 1); Hswish Max(Min(x, p0) + p0, 0)*p1*x;
 *   Mish x > p0 ? x : x*tanh(softplus(x)), evaluated as x*n/(n + 2) with n = e*(e + 2), e = exp(min(x, 20)), which
 *   has no cancellation; HardSigmoid Max(0, Min(x*p0 + p1, 1)) (scale first); Swish x/(1 + exp(-x*p0));
 *   Gelu x*(erf(x*sqrt(1/2)) + 1)*0.5.
 * Only the parameters an activation reads are read (params may be NULL for Identity, Relu and Gelu).
 */
#ifndef SB_ACTIVATION_H
#define SB_ACTIVATION_H

#include "simd_synet.h"
#include "internal/vmath.h"
#include "internal/epilogue.h" /* sb_epilogue */


SB_INLINE vf sb_activate(vf x, int activation, vf p0, vf p1)
{
    const vf zero = vset1(0.0f), one = vset1(1.0f);
    switch (activation) {
    case SimdConvolutionActivationRelu: return vmax(zero, x);
    case SimdConvolutionActivationLeakyRelu:
    case SimdConvolutionActivationPrelu: return vmax(zero, x) + p0 * vmin(x, zero);
    case SimdConvolutionActivationRestrictRange: return vmin(vmax(p0, x), p1);  /* upper when p0 > p1, NaN -> upper */
    case SimdConvolutionActivationElu: return vselect(x >= zero, x, p0 * (vexp(x) - one));
    case SimdConvolutionActivationHswish: return vmax(vmin(x, p0) + p0, zero) * p1 * x;
    case SimdConvolutionActivationMish: {
        vf e = vexp(vmin(x, vset1(20.0f)));
        vf n = e * (e + vset1(2.0f));
        return vselect(x > p0, x, x * (n / (n + vset1(2.0f))));
    }
    case SimdConvolutionActivationHardSigmoid: return vmax(zero, vmin(x * p0 + p1, one));
    case SimdConvolutionActivationSwish: return x / (one + vexp(zero - x * p0));
    case SimdConvolutionActivationGelu: return x * (verf(x * vset1(0.70710678118654752f)) + one) * vset1(0.5f);
    default: return x;
    }
}

/* How many params an activation reads from the front of `params` (prelu reads one per channel instead). */
SB_INLINE int sb_activation_scalar_params(int activation)
{
    switch (activation) {
    case SimdConvolutionActivationLeakyRelu:
    case SimdConvolutionActivationElu:
    case SimdConvolutionActivationMish:
    case SimdConvolutionActivationSwish: return 1;
    case SimdConvolutionActivationRestrictRange:
    case SimdConvolutionActivationHswish:
    case SimdConvolutionActivationHardSigmoid: return 2;
    default: return 0;
    }
}

/* One row: columns [0, cols) of C, output column of element j is col0 + j. `act` is a constant after inlining. */
SB_INLINE void sb_epilogue_row_(float * C, size_t cols, size_t col0, const float * bias, float row_bias, int has_bias,
    int bias_per_row, const float * slopes, vf p0, vf p1, int prelu_per_col, const int act)
{
    size_t j = 0;
    for (; j + SB_W <= cols; j += SB_W) {
        vf x = vload(C + j);
        if (has_bias)
            x += bias_per_row ? vset1(row_bias) : vload(bias + col0 + j);
        vf q = prelu_per_col ? vload(slopes + col0 + j) : p0;
        vstore(C + j, sb_activate(x, act, q, p1));
    }
    if (j < cols) {
        size_t n = cols - j;
        vf x = vload_n(C + j, n);
        if (has_bias)
            x += bias_per_row ? vset1(row_bias) : vload_n(bias + col0 + j, n);
        vf q = prelu_per_col ? vload_n(slopes + col0 + j, n) : p0;
        vstore_n(C + j, sb_activate(x, act, q, p1), n);
    }
}

SB_INLINE void sb_epilogue_rows_(float * C, size_t ldc, size_t rows, size_t cols, size_t row0, size_t col0,
    const sb_epilogue * e, const int act)
{
    int has_bias = e->bias != NULL;
    int nscalar = sb_activation_scalar_params(act);
    vf p0 = vset1(nscalar >= 1 ? e->params[0] : 0.0f), p1 = vset1(nscalar >= 2 ? e->params[1] : 0.0f);
    int prelu = act == SimdConvolutionActivationPrelu;
    int prelu_per_col = prelu && !e->params_per_row;
    for (size_t i = 0; i < rows; ++i) {
        float row_bias = has_bias && e->bias_per_row ? e->bias[row0 + i] : 0.0f;
        vf q = prelu && e->params_per_row ? vset1(e->params[row0 + i]) : p0;
        sb_epilogue_row_(C + i * ldc, cols, col0, e->bias, row_bias, has_bias, e->bias_per_row, e->params, q, p1,
            prelu_per_col, act);
    }
}

/* Bias + activation in place over C[rows][cols] (ldc); see the top of this file. e == NULL: nothing to do. */
static inline void sb_epilogue_block(float * C, size_t ldc, size_t rows, size_t cols, size_t row0, size_t col0,
    const sb_epilogue * e)
{
    if (e == NULL || rows == 0 || cols == 0)
        return;
    switch (e->activation) {
#define SB_EPILOGUE_CASE(value) \
    case value: sb_epilogue_rows_(C, ldc, rows, cols, row0, col0, e, value); break;
    case SimdConvolutionActivationIdentity:
        if (e->bias)
            sb_epilogue_rows_(C, ldc, rows, cols, row0, col0, e, SimdConvolutionActivationIdentity);
        break;
    SB_EPILOGUE_CASE(SimdConvolutionActivationRelu)
    SB_EPILOGUE_CASE(SimdConvolutionActivationLeakyRelu)
    SB_EPILOGUE_CASE(SimdConvolutionActivationRestrictRange)
    SB_EPILOGUE_CASE(SimdConvolutionActivationPrelu)
    SB_EPILOGUE_CASE(SimdConvolutionActivationElu)
    SB_EPILOGUE_CASE(SimdConvolutionActivationHswish)
    SB_EPILOGUE_CASE(SimdConvolutionActivationMish)
    SB_EPILOGUE_CASE(SimdConvolutionActivationHardSigmoid)
    SB_EPILOGUE_CASE(SimdConvolutionActivationSwish)
    SB_EPILOGUE_CASE(SimdConvolutionActivationGelu)
#undef SB_EPILOGUE_CASE
    default: break;
    }
}

/* 1 if the epilogue changes anything (a bias or a non-identity activation). */
SB_INLINE int sb_epilogue_active(const sb_epilogue * e)
{
    return e != NULL && (e->bias != NULL || e->activation != SimdConvolutionActivationIdentity);
}

#endif /* SB_ACTIVATION_H */
