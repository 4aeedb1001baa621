/*
 * api.c: the exported FP32 convolution context (SimdSynetConvolution32f*).
 *
 * Init checks the parameters (upstream's rules, plus the ones upstream leaves to crash: zero stride,
 * kernel or dilation, a group not dividing the channels, an activation out of range), records the ISA selected
 * now and chooses an algorithm for the shape:
 *   1. DepthwiseNhwc / DepthwiseNchw: group == srcC == dstC (direct kernels, no scratch);
 *   2. WinogradF4x4 / WinogradF2x2: 3x3, stride 1, dilation 1, group 1, enough channels and pixels for the
 *      transforms to pay (F4x4 from 16x16 outputs);
 *   3. Direct1x1: 1x1, stride 1, no padding (the source is the GEMM operand as it is);
 *   4. NhwcDirect: group 1, 16 to 32 input channels, 2 to 64 taps (the GEMM reads each tap's rows from the
 *      source instead of an im2row copy; NCHW: from the planes unless they alias in L1, else from an NHWC copy,
 *      into NHWC output rows transposed into place);
 *   5. GemmNN: im2col (NCHW) / im2row (NHWC) + GEMM, every other geometry.
 * Info names it as "<isa>::<algorithm>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simd_synet.h"
#include "simdbind_ext.h"
#include "internal/kernels.h"
#include "convolution/conv.h"
#include "internal/memory.h"

static sb_conv_pack_nhwc_fn * const pack_nhwc_table[SB_ISA_COUNT] = SB_TABLE(conv_pack_nhwc);

static conv_forward_sig * const forward_table[CONV_ALGO_COUNT][SB_ISA_COUNT] = {
    [CONV_ALGO_GEMM] = SB_TABLE(conv_forward_gemm),
    [CONV_ALGO_1X1] = SB_TABLE(conv_forward_1x1),
    [CONV_ALGO_DW_NHWC] = SB_TABLE(conv_forward_dw_nhwc),
    [CONV_ALGO_DW_NCHW] = SB_TABLE(conv_forward_dw_nchw),
    [CONV_ALGO_WINOGRAD2] = SB_TABLE(conv_forward_winograd2),
    [CONV_ALGO_WINOGRAD4] = SB_TABLE(conv_forward_winograd4),
    [CONV_ALGO_DIRECT_NHWC] = SB_TABLE(conv_forward_direct_nhwc),
};

static const char * const algo_names[CONV_ALGO_COUNT] = {
    [CONV_ALGO_GEMM] = "GemmNN",
    [CONV_ALGO_1X1] = "Direct1x1",
    [CONV_ALGO_DW_NHWC] = "DepthwiseNhwc",
    [CONV_ALGO_DW_NCHW] = "DepthwiseNchw",
    [CONV_ALGO_WINOGRAD2] = "WinogradF2x2",
    [CONV_ALGO_WINOGRAD4] = "WinogradF4x4",
    [CONV_ALGO_DIRECT_NHWC] = "NhwcDirect",
};

static int output_size_ok(size_t src, size_t pad_begin, size_t pad_end, size_t kernel, size_t dilation, size_t stride,
    size_t dst)
{
    size_t span = dilation * (kernel - 1) + 1;
    if (src + pad_begin + pad_end < span)
        return 0;
    return dst > 0 && dst == (src + pad_begin + pad_end - span) / stride + 1;
}

static int valid(size_t batch, const SimdConvolutionParameters * p)
{
    if (batch == 0 || p->srcC == 0 || p->dstC == 0 || p->srcH == 0 || p->srcW == 0)
        return 0;
    if (p->srcT != SimdTensorData32f || p->dstT != SimdTensorData32f)
        return 0;
    if (p->srcF != p->dstF || (p->srcF != SimdTensorFormatNchw && p->srcF != SimdTensorFormatNhwc))
        return 0;
    if (p->kernelY == 0 || p->kernelX == 0 || p->strideY == 0 || p->strideX == 0 || p->dilationY == 0 ||
        p->dilationX == 0)
        return 0;
    if (p->group == 0 || p->srcC % p->group || p->dstC % p->group)
        return 0;
    if ((unsigned)p->activation > (unsigned)SimdConvolutionActivationGelu)
        return 0;
    return output_size_ok(p->srcH, p->padY, p->padH, p->kernelY, p->dilationY, p->strideY, p->dstH) &&
        output_size_ok(p->srcW, p->padX, p->padW, p->kernelX, p->dilationX, p->strideX, p->dstW);
}

#define WINOGRAD4_MIN 16 /* F(4x4,3x3) from outputs of 16x16 on (see choose) */

static int choose(const SimdConvolutionParameters * p)
{
    if (p->group == p->srcC && p->group == p->dstC)
        return p->srcF == SimdTensorFormatNhwc ? CONV_ALGO_DW_NHWC : CONV_ALGO_DW_NCHW;
    /* Winograd F(2x2,3x3) does 16 multiplies per 2x2 outputs instead of 36, at the price of the transforms
       (about 16*(C + D) adds per tile): it pays once both channel counts are moderate and there are tiles enough
       to keep the 16 GEMMs busy. F(4x4,3x3) does 36 per 4x4 outputs (4x fewer than direct); its 6x6 transforms cost
       more per tile, and its tiles waste more of a small output: measured against F(2x2) at 32, 128 and 512
       channels (avx2 and avx512bw, both layouts), F(4x4) is 0.5-0.9x at 8x8 to 10x10 outputs, about even at 12x12
       and 14x14, and 1.1-1.9x from 16x16 on. */
    if (p->kernelY == 3 && p->kernelX == 3 && p->strideY == 1 && p->strideX == 1 && p->dilationY == 1 &&
        p->dilationX == 1 && p->group == 1 && p->srcC >= 16 && p->dstC >= 16 && p->dstH >= 4 && p->dstW >= 4 &&
        p->padY <= 2 && p->padX <= 2 && p->padH <= 2 && p->padW <= 2)
        return p->dstH >= WINOGRAD4_MIN && p->dstW >= WINOGRAD4_MIN ? CONV_ALGO_WINOGRAD4 : CONV_ALGO_WINOGRAD2;
    if (p->kernelY == 1 && p->kernelX == 1 && p->strideY == 1 && p->strideX == 1 && p->padY == 0 && p->padX == 0 &&
        p->padH == 0 && p->padW == 0)
        return CONV_ALGO_1X1;
    /* Measured against im2row + GEMM (interleaved, avx2 and avx512bw): 3x3 stride 2 with 16 and 32 channels
       +10-35%, 5x5 with 32 +20%; with 64 channels +-4%, with 128 -10% (a block of output pixels re-reads all its
       taps for every panel of the weights, where the GEMM keeps a K block of a panel in L1), 1x1 stride 2 with 256
       -5%. Below 16 channels each tap's multiply-adds are too few for the loads around them. */
    size_t taps = p->kernelY * p->kernelX;
    if (p->group == 1 && taps > 1 && taps <= CONV_DIRECT_TAPS && p->srcC >= 16 && p->srcC <= 32)
        return CONV_ALGO_DIRECT_NHWC;
    return CONV_ALGO_GEMM;
}

static size_t external_size(const conv_ctx * c)
{
    const SimdConvolutionParameters * p = &c->p;
    switch (c->algo) {
    case CONV_ALGO_GEMM: return p->srcC * p->kernelY * p->kernelX * p->dstH * p->dstW;
    case CONV_ALGO_WINOGRAD2:
    case CONV_ALGO_WINOGRAD4: {
        size_t R = c->algo == CONV_ALGO_WINOGRAD4 ? 4 : 2, T = ((p->dstH + R - 1) / R) * ((p->dstW + R - 1) / R);
        size_t nchw = p->srcF == SimdTensorFormatNchw ? p->srcH * p->srcW * p->srcC + p->dstH * p->dstW * p->dstC : 0;
        return (R + 2) * (R + 2) * (conv_winograd_plane(T, p->srcC) + conv_winograd_plane(T, p->dstC)) + nchw;
    }
    case CONV_ALGO_DIRECT_NHWC: /* NCHW: the output in NHWC (and, unless read in place, the source) */
        if (p->srcF != SimdTensorFormatNchw)
            return 1;
        return p->dstC * p->dstH * p->dstW + (conv_direct_in_place(p) ? 0 : p->srcC * p->srcH * p->srcW);
    default: return 1;
    }
}

/* U = G g Gt for every (output, input) pair, computed in double, stored U[N*N][C][D] (the B operands of the N*N
   GEMMs, whatever the layout), N = 4 for F(2x2,3x3) and 6 for F(4x4,3x3). */
static float * winograd_weights(const conv_ctx * c, const float * weight, size_t * size)
{
    static const double G2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    static const double G4[6][3] = {{1.0 / 4, 0, 0}, {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
        {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
    const SimdConvolutionParameters * p = &c->p;
    const int N = c->algo == CONV_ALGO_WINOGRAD4 ? 6 : 4;
    const double (*G)[3] = N == 6 ? G4 : G2;
    size_t C = p->srcC, D = p->dstC, KK = (size_t)(N * N);
    float * U = (float *)sb_alloc(KK * C * D, sizeof(float));
    if (U == NULL)
        return NULL;
    for (size_t o = 0; o < D; ++o)
        for (size_t i = 0; i < C; ++i) {
            double g[3][3], t[6][3];
            for (int y = 0; y < 3; ++y)
                for (int x = 0; x < 3; ++x)
                    g[y][x] = p->srcF == SimdTensorFormatNhwc ? weight[((y * 3 + x) * C + i) * D + o]
                                                                : weight[((o * C + i) * 3 + y) * 3 + x];
            for (int r = 0; r < N; ++r)
                for (int x = 0; x < 3; ++x)
                    t[r][x] = G[r][0] * g[0][x] + G[r][1] * g[1][x] + G[r][2] * g[2][x];
            for (int r = 0; r < N; ++r)
                for (int q = 0; q < N; ++q) {
                    double u = t[r][0] * G[q][0] + t[r][1] * G[q][1] + t[r][2] * G[q][2];
                    size_t k = (size_t)(r * N + q);
                    U[(k * C + i) * D + o] = (float)u;
                }
        }
    *size = KK * C * D;
    return U;
}

/* OIHW weights (group 1) as HWIO, the NHWC layout (sb_alloc; NULL without memory). */
static float * oihw_to_hwio(const SimdConvolutionParameters * p, const float * weight)
{
    size_t C = p->srcC, D = p->dstC, kY = p->kernelY, kX = p->kernelX;
    float * hwio = (float *)sb_alloc(kY * kX * C * D, sizeof(float));
    if (hwio != NULL)
        for (size_t o = 0; o < D; ++o)
            for (size_t i = 0; i < C; ++i)
                for (size_t y = 0; y < kY; ++y)
                    for (size_t x = 0; x < kX; ++x)
                        hwio[((y * kX + x) * C + i) * D + o] = weight[((o * C + i) * kY + y) * kX + x];
    return hwio;
}

static void release(sb_context * self)
{
    conv_ctx * c = (conv_ctx *)self;
    sb_free(c->packed);
    sb_free(c->buffer);
    sb_free(c);
}

SIMD_API void * SimdSynetConvolution32fInit(size_t batch, const SimdConvolutionParameters * conv)
{
    sb_clear_error();
    if (conv == NULL || !valid(batch, conv))
        return NULL;
    conv_ctx * c = (conv_ctx *)sb_alloc_zeroed(1, sizeof(conv_ctx));
    if (c == NULL) {
        sb_fail_no_memory();
        return NULL;
    }
    c->base.release = release;
    c->p = *conv;
    c->batch = batch;
    c->isa = sb_isa();
    c->algo = choose(conv);
    return c;
}

SIMD_API size_t SimdSynetConvolution32fExternalBufferSize(const void * context)
{
    return context ? external_size((const conv_ctx *)context) : 0;
}

SIMD_API size_t SimdSynetConvolution32fInternalBufferSize(const void * context)
{
    const conv_ctx * c = (const conv_ctx *)context;
    return c ? c->buffer_size + c->packed_size : 0;
}

SIMD_API const char * SimdSynetConvolution32fInfo(const void * context)
{
    if (context == NULL)
        return "";
    conv_ctx * c = (conv_ctx *)context;
    snprintf(c->info, sizeof(c->info), "%s::%s", SimdBindIsaName(c->isa), algo_names[c->algo]);
    return c->info;
}

SIMD_API void SimdSynetConvolution32fSetParams(void * context, const float * weight, SimdBool * internal,
    const float * bias, const float * params)
{
    conv_ctx * c = (conv_ctx *)context;
    sb_clear_error();
    if (c == NULL)
        return;
    c->weight = weight;
    c->no_memory = 0;
    c->bias = bias;
    c->params = params;
    SimdBool copied = SimdFalse;
    if ((c->algo == CONV_ALGO_WINOGRAD2 || c->algo == CONV_ALGO_WINOGRAD4) && weight != NULL) {
        size_t size = 0;
        float * U = winograd_weights(c, weight, &size);
        sb_free(c->packed);
        c->packed = U;
        c->packed_size = U ? size : 0;
        copied = U ? SimdTrue : SimdFalse;
        if (U == NULL) {
            c->weight = NULL, c->no_memory = 1; /* no transform: Forward fails rather than read a missing one */
            sb_fail_no_memory();
        }
    }
    if (((c->algo == CONV_ALGO_GEMM || c->algo == CONV_ALGO_1X1) && c->p.srcF == SimdTensorFormatNhwc &&
         weight != NULL) || (c->algo == CONV_ALGO_DIRECT_NHWC && weight != NULL)) {
        /* NHWC GEMMs take the weights as B: packed once here instead of at every call. Without memory the
           GEMM reads the caller's weights directly (same results); NhwcDirect cannot, so SetParams fails and
           Forward with it, as Winograd's does without its transform. NCHW NhwcDirect packs its OIHW weights as
           HWIO. */
        size_t size = 0;
        float * hwio = c->p.srcF == SimdTensorFormatNchw ? oihw_to_hwio(&c->p, weight) : NULL;
        float * packed = c->p.srcF == SimdTensorFormatNchw && hwio == NULL ? NULL
            : SB_VARIANT(pack_nhwc_table, c->isa)(c, hwio ? hwio : weight, &size);
        sb_free(hwio);
        sb_free(c->packed);
        c->packed = packed;
        c->packed_size = packed ? size : 0;
        copied = packed ? SimdTrue : SimdFalse;
        if (packed == NULL && c->algo == CONV_ALGO_DIRECT_NHWC) {
            c->weight = NULL, c->no_memory = 1;
            sb_fail_no_memory();
        }
    }
    if (internal)
        *internal = copied;
}

SIMD_API void SimdSynetConvolution32fForward(void * context, const float * src, float * buf, float * dst)
{
    conv_ctx * c = (conv_ctx *)context;
    sb_clear_error();
    if (c == NULL || src == NULL || dst == NULL)
        return;
    if (c->no_memory)
        sb_fail_no_memory();
    if (c->weight == NULL) /* no SetParams, or one that failed */
        return;
    size_t need = external_size(c);
    if (buf == NULL && need > 1) {
        /* Upstream's interface lets a caller leave the scratch to the context: taken on first use (callers that
           bring their own, as the simdbind wrappers do, never pay for a second one), and a failure is reported. */
        if (c->buffer_size < need) {
            float * grown = (float *)sb_alloc(need, sizeof(float));
            if (grown == NULL) {
                sb_fail_no_memory();
                return;
            }
            sb_free(c->buffer);
            c->buffer = grown;
            c->buffer_size = need;
        }
        buf = c->buffer;
    }
    SB_VARIANT(forward_table[c->algo], c->isa)(c, src, buf, dst);
}
