/*
 * epilogue.h: sb_epilogue, what is applied to each output element after a GEMM/convolution sum (owned by the
 * inner-product family). Plain C, no vector types, so that api.c files can fill one in too.
 */
#ifndef SB_EPILOGUE_H
#define SB_EPILOGUE_H

/* bias (per column j, or per row i when bias_per_row), then the activation (SimdConvolutionActivationType value)
   with its params (prelu slopes per column, or per row when params_per_row). bias may be NULL (no bias); params may
   be NULL only for activations that read none (Identity, Relu, Gelu). */
typedef struct {
    const float * bias;
    int bias_per_row;
    int activation;
    const float * params;
    int params_per_row;
} sb_epilogue;

#endif /* SB_EPILOGUE_H */
