/*
 * simd_synet.h: the in-scope C API of the Simd library (Synet functions and the general functions they need),
 * written for simdbind from the documentation pages and shared/spec/SIMD_SYNET_ABI.md.
 *
 * Names, enum values, struct layout and signatures are those of upstream v7.1.162, so that one Python layer can
 * drive the bundled library and any upstream build. This header is the only declaration of the API: the bundled
 * kernels include it and build_simd.py turns it into cffi declarations (it must stay plain C that cffi's parser
 * accepts: no function-like macros, no attributes, preprocessor lines only for the include guard and SIMD_API).
 */
#ifndef SIMD_SYNET_H
#define SIMD_SYNET_H

#include <stddef.h>
#include <stdint.h>

#ifndef SIMD_API
#define SIMD_API
#endif

typedef enum { SimdFalse = 0, SimdTrue = 1 } SimdBool;

typedef enum {
    SimdCpuDescModel = 0
} SimdCpuDescType;

/* Values of v7.1.161 - v7.1.162; earlier and later releases shift the members after Neon. */
typedef enum {
    SimdCpuInfoSockets = 0,
    SimdCpuInfoCores = 1,
    SimdCpuInfoThreads = 2,
    SimdCpuInfoCacheL1 = 3,
    SimdCpuInfoCacheL2 = 4,
    SimdCpuInfoCacheL3 = 5,
    SimdCpuInfoRam = 6,
    SimdCpuInfoSse41 = 7,
    SimdCpuInfoAvx2 = 8,
    SimdCpuInfoAvx512bw = 9,
    SimdCpuInfoAvx512vnni = 10,
    SimdCpuInfoAmxBf16 = 11,
    SimdCpuInfoNeon = 12,
    SimdCpuInfoSve = 13,
    SimdCpuInfoSveSize = 14,
    SimdCpuInfoHvx = 15,
    SimdCpuInfoCurrentFrequency = 16
} SimdCpuInfoType;

typedef enum {
    SimdConvolutionActivationIdentity = 0,
    SimdConvolutionActivationRelu = 1,
    SimdConvolutionActivationLeakyRelu = 2,
    SimdConvolutionActivationRestrictRange = 3,
    SimdConvolutionActivationPrelu = 4,
    SimdConvolutionActivationElu = 5,
    SimdConvolutionActivationHswish = 6,
    SimdConvolutionActivationMish = 7,
    SimdConvolutionActivationHardSigmoid = 8,
    SimdConvolutionActivationSwish = 9,
    SimdConvolutionActivationGelu = 10
} SimdConvolutionActivationType;

/* Flags in four fields (FMA, 8i, 16bf, 16fp); duplicate values are legal and intended. */
typedef enum {
    SimdSynetCompatibilityDefault = 0,
    SimdSynetCompatibilityFmaUse = 0,
    SimdSynetCompatibilityFmaNoTail = 1,
    SimdSynetCompatibilityFmaAvoid = 2,
    SimdSynetCompatibilityFmaMask = 3,
    SimdSynetCompatibility8iPrecise = 0,
    SimdSynetCompatibility8iOverflow = 4,
    SimdSynetCompatibility8iNarrowed = 8,
    SimdSynetCompatibility8iMask = 12,
    SimdSynetCompatibility16bfAvoid = 0,
    SimdSynetCompatibility16bfHard = 16,
    SimdSynetCompatibility16bfSoft = 32,
    SimdSynetCompatibility16bfMask = 48,
    SimdSynetCompatibility16fpAvoid = 0,
    SimdSynetCompatibility16fpHard = 64,
    SimdSynetCompatibility16fpSoft = 128,
    SimdSynetCompatibility16fpMask = 192
} SimdSynetCompatibilityType;

typedef enum {
    SimdSynetEltwiseOperationProduct = 0,
    SimdSynetEltwiseOperationSum = 1,
    SimdSynetEltwiseOperationMax = 2,
    SimdSynetEltwiseOperationMin = 3
} SimdSynetEltwiseOperationType;

/* Values of v6.2.159 and later; older releases number these differently. */
typedef enum {
    SimdSynetUnaryOperation32fAbs = 0,
    SimdSynetUnaryOperation32fCeil = 1,
    SimdSynetUnaryOperation32fCos = 2,
    SimdSynetUnaryOperation32fErf = 3,
    SimdSynetUnaryOperation32fExp = 4,
    SimdSynetUnaryOperation32fFloor = 5,
    SimdSynetUnaryOperation32fLog = 6,
    SimdSynetUnaryOperation32fNeg = 7,
    SimdSynetUnaryOperation32fNot = 8,
    SimdSynetUnaryOperation32fRcp = 9,
    SimdSynetUnaryOperation32fRound = 10,
    SimdSynetUnaryOperation32fRsqrt = 11,
    SimdSynetUnaryOperation32fSign = 12,
    SimdSynetUnaryOperation32fSin = 13,
    SimdSynetUnaryOperation32fSqrt = 14,
    SimdSynetUnaryOperation32fTanh = 15,
    SimdSynetUnaryOperation32fZero = 16
} SimdSynetUnaryOperation32fType;

typedef enum {
    SimdTensorFormatUnknown = -1,
    SimdTensorFormatNchw = 0,
    SimdTensorFormatNhwc = 1
} SimdTensorFormatType;

typedef enum {
    SimdTensorDataUnknown = -1,
    SimdTensorData32f = 0,
    SimdTensorData32i = 1,
    SimdTensorData8i = 2,
    SimdTensorData8u = 3,
    SimdTensorData64i = 4,
    SimdTensorData64u = 5,
    SimdTensorDataBool = 6,
    SimdTensorData16b = 7,
    SimdTensorData16f = 8
} SimdTensorDataType;

/* 160 bytes on LP64 (upstream's layout). padY/padX are the begin pads, padH/padW the end pads. */
typedef struct SimdConvolutionParameters {
    size_t srcC;
    size_t srcH;
    size_t srcW;
    SimdTensorDataType srcT;
    SimdTensorFormatType srcF;
    size_t dstC;
    size_t dstH;
    size_t dstW;
    SimdTensorDataType dstT;
    SimdTensorFormatType dstF;
    size_t kernelY;
    size_t kernelX;
    size_t dilationY;
    size_t dilationX;
    size_t strideY;
    size_t strideX;
    size_t padY;
    size_t padX;
    size_t padH;
    size_t padW;
    size_t group;
    SimdConvolutionActivationType activation;
} SimdConvolutionParameters;

/* General functions. */
SIMD_API const char * SimdVersion(void);
SIMD_API const char * SimdCpuDesc(SimdCpuDescType type);
SIMD_API uint64_t SimdCpuInfo(SimdCpuInfoType type);
SIMD_API void SimdRelease(void * context);
SIMD_API size_t SimdGetThreadNumber(void);
SIMD_API void SimdSetThreadNumber(size_t threadNumber);
SIMD_API SimdBool SimdGetFastMode(void);
SIMD_API void SimdSetFastMode(SimdBool value);
SIMD_API void SimdFloat32ToBFloat16(const float * src, size_t size, uint16_t * dst);
SIMD_API void SimdBFloat16ToFloat32(const uint16_t * src, size_t size, float * dst);

/* Elementwise and normalization. */
SIMD_API void SimdSynetEltwiseLayerForward(float const * const * src, const float * weight, size_t count, size_t size,
    SimdSynetEltwiseOperationType type, float * dst);
SIMD_API void SimdSynetLrnLayerCrossChannels(const float * src, size_t half, size_t channels, size_t spatial,
    const float * k, float * dst, SimdTensorFormatType format);
SIMD_API void SimdSynetShuffleLayerForward(const float * src0, const float * src1, size_t channels0, size_t channels1,
    size_t spatial, float * dst0, float * dst1, SimdTensorFormatType format, int type);
SIMD_API void SimdSynetSoftmax32f(const float * src, size_t outer, size_t count, size_t inner, float * dst);
SIMD_API void SimdSynetSoftmaxLayerForward(const float * src, size_t outer, size_t count, size_t inner, float * dst);
SIMD_API void SimdSynetSoftmax16b(const uint16_t * src, size_t outer, size_t count, size_t inner, uint16_t * dst);
SIMD_API void SimdSynetUnaryOperation32f(const float * src, size_t size, SimdSynetUnaryOperation32fType type,
    float * dst);

/* Inner product. */
SIMD_API void * SimdSynetInnerProduct32fInit(size_t M, size_t N, size_t K, SimdBool transB, SimdBool constB,
    SimdBool bias, SimdConvolutionActivationType activation);
SIMD_API size_t SimdSynetInnerProduct32fInternalBufferSize(const void * context);
SIMD_API size_t SimdSynetInnerProduct32fExternalBufferSize(const void * context);
SIMD_API void SimdSynetInnerProduct32fSetParams(void * context, const float * weight, SimdBool * internal,
    const float * bias, const float * params);
SIMD_API void SimdSynetInnerProduct32fForward(void * context, const float * A, const float * B, float * buf,
    float * C);
SIMD_API void SimdSynetInnerProductLayerForward(const float * src, const float * weight, const float * bias,
    size_t count, size_t size, float * dst);
SIMD_API void SimdSynetInnerProduct8i(size_t M, size_t N, size_t K, const uint8_t * src, const int8_t * weight,
    int32_t * dst, SimdSynetCompatibilityType compatibility);

/* Convolution. */
SIMD_API void * SimdSynetConvolution32fInit(size_t batch, const SimdConvolutionParameters * conv);
SIMD_API size_t SimdSynetConvolution32fExternalBufferSize(const void * context);
SIMD_API size_t SimdSynetConvolution32fInternalBufferSize(const void * context);
SIMD_API const char * SimdSynetConvolution32fInfo(const void * context);
SIMD_API void SimdSynetConvolution32fSetParams(void * context, const float * weight, SimdBool * internal,
    const float * bias, const float * params);
SIMD_API void SimdSynetConvolution32fForward(void * context, const float * src, float * buf, float * dst);

/* Gather elements. */
SIMD_API void * SimdSynetGatherElementsInit(SimdTensorDataType dataType, SimdTensorDataType indexType,
    SimdBool indexConst, size_t indexUsers, const size_t * outer, size_t outerSize, size_t srcCount, size_t inner,
    size_t idxCount);
SIMD_API void SimdSynetGatherElementsSetIndex(const void * context, const uint8_t * idx);
SIMD_API size_t SimdSynetGatherElementsInternalBufferSize(const void * context);
SIMD_API void SimdSynetGatherElementsForward(void * context, const uint8_t * src, const uint8_t * idx,
    uint8_t * dst);

/* Pooling. */
SIMD_API void SimdSynetPoolingAverage(const float * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelY,
    size_t kernelX, size_t strideY, size_t strideX, size_t padY, size_t padX, float * dst, size_t dstH, size_t dstW,
    SimdBool excludePad, SimdTensorFormatType format);
SIMD_API void SimdSynetPoolingMax32f(const float * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelC,
    size_t kernelY, size_t kernelX, size_t strideC, size_t strideY, size_t strideX, size_t padC, size_t padY,
    size_t padX, float * dst, size_t dstC, size_t dstH, size_t dstW, SimdTensorFormatType format);
SIMD_API void SimdSynetPoolingMax16b(const uint16_t * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelY,
    size_t kernelX, size_t strideY, size_t strideX, size_t padY, size_t padX, uint16_t * dst, size_t dstH,
    size_t dstW, SimdTensorFormatType format);
SIMD_API void SimdSynetPoolingMax8u(const uint8_t * src, size_t srcC, size_t srcH, size_t srcW, size_t kernelY,
    size_t kernelX, size_t strideY, size_t strideX, size_t padY, size_t padX, uint8_t * dst, size_t dstH,
    size_t dstW, SimdTensorFormatType format);

#endif /* SIMD_SYNET_H */
