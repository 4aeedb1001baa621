/*
 * bf16.h: bfloat16 conversions with upstream's exact bit arithmetic (scalar here; vectors in internal/vec.h).
 * To bf16: round to nearest even on the bit pattern, wrapping modulo 2^32, with no special case for NaN, Inf or
 * subnormals (so some NaNs become Inf or zero, exactly as upstream's software path does).
 */
#ifndef SB_BF16_H
#define SB_BF16_H

#include <stdint.h>
#include <string.h>

/* The rounding, on the float's bits u (uint32_t, or a vector of them): the bf16 bits in the low 16 of each lane. */
#define SB_BF16_ROUND(u) (((u) + 0x7FFFu + (((u) >> 16) & 1u)) >> 16)

static inline float sb_bf16_to_float(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint16_t sb_float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)SB_BF16_ROUND(u);
}

#endif /* SB_BF16_H */
