/* api.c: the exported functions of the elementwise family; each forwards to the kernel of the selected ISA. */
#include "simd_synet.h"
#include "internal/dispatch.h"

typedef void (*eltwise_fn)(float const * const *, const float *, size_t, size_t, SimdSynetEltwiseOperationType,
    float *);
SB_DECLARE(eltwise, void, (float const * const *, const float *, size_t, size_t, SimdSynetEltwiseOperationType,
    float *));
static const eltwise_fn eltwise_table[SB_ISA_COUNT] = SB_TABLE(eltwise);

SIMD_API void SimdSynetEltwiseLayerForward(float const * const * src, const float * weight, size_t count, size_t size,
    SimdSynetEltwiseOperationType type, float * dst)
{
    if (count < 2 || type < SimdSynetEltwiseOperationProduct || type > SimdSynetEltwiseOperationMin)
        return;
    SB_PICK(eltwise_table)(src, weight, count, size, type, dst);
}
