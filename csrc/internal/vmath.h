/*
 * vmath.h: vector elementary functions over `vf`, for *.dispatch.c sources (include after internal/target.h).
 *
 *   vf vexp(vf x);   vf vlog(vf x);   vf verf(vf x);   vf vtanh(vf x);   vf vsin(vf x);   vf vcos(vf x);
 *
 * Each is lane-wise (a lane's result never depends on the lane count, so tails computed through vload_n/vstore_n
 * match the body) and written once for every ISA; ISAs with FMA fuse the polynomial steps, so the last bit can
 * differ between ISAs, never between lanes of one call. Accuracy against the exact result, measured at base, sse41
 * and avx2 over every 7th float32 bit pattern (normal and subnormal inputs; max observed error in brackets):
 *
 *   vexp   <= 1.5 ulp [0.99] wherever the result is normal; exp(0) == 1 exactly; subnormal results are scaled with
 *          one rounding; x > 88.7228 -> +inf (also +inf), x < -103.98 -> +0 (also -inf).
 *   vlog   <= 1.5 ulp [0.86] for every x > 0 (subnormals included); log(1) == +0, log(+-0) = -inf,
 *          log(x < 0) = NaN, log(+inf) = +inf.
 *   verf   <= 1.5 ulp [1.22]; odd (erf(-0) == -0); erf(+-inf) = +-1.
 *   vtanh  <= 1.5 ulp [1.33]; odd (tanh(-0) == -0); tanh(+-inf) = +-1.
 *   vsin, vcos  <= 1.5 ulp [1.26] for every finite x: |x| <= 6000 by exact float-float argument reduction
 *          (five-part pi/2); lanes with larger |x| are recomputed with the C library's sinf/cosf (correctly reduced
 *          for every float, so large arguments stay right at a scalar cost); sin(-0) == -0; +-inf -> NaN.
 *   NaN input gives NaN output in every function.
 *
 * The polynomial coefficients were fitted for this file (weighted minimax on Chebyshev nodes, float64), then
 * rounded to float32 and checked in float32 arithmetic.
 */
#ifndef SB_VMATH_H
#define SB_VMATH_H

#include <math.h>

/* 1 if any lane of a comparison mask is set. */
SB_INLINE int sb_vm_any(vi mask)
{
#if SB_ISA_AT_LEAST(3)
    return _mm512_test_epi32_mask((__m512i)mask, (__m512i)mask) != 0;
#elif SB_ISA_AT_LEAST(2)
    return !_mm256_testz_si256((__m256i)mask, (__m256i)mask);
#elif defined(__SSE2__)
    return _mm_movemask_ps((__m128)mask) != 0;
#else
    int any = 0;
    for (int i = 0; i < SB_W; ++i) any |= mask[i];
    return any != 0;
#endif
}

/* Round to the nearest integer (ties to even) for |x| < 2^22, as a float and as an int32. */
SB_INLINE vf sb_vm_rint(vf x, vi * n)
{
    const vf magic = vset1(12582912.0f); /* 1.5 * 2^23 */
    vf t = x + magic;
    *n = vbits(t) - vbits(magic);
    return t - magic;
}

SB_INLINE vf sb_vm_copysign(vf magnitude, vf sign)
{
    const vi s = vset1i((int32_t)0x80000000u);
    return vfloat_bits((vbits(magnitude) & ~s) | (vbits(sign) & s));
}

SB_INLINE vf sb_vm_nan_through(vf x, vf y) { return vselect(x != x, x + x, y); }

/* exp(x) = 2^n * exp(r), r = x - n*ln2 in [-ln2/2, ln2/2]; exp(r) = 1 + r + r^2 * P(r). */
SB_INLINE vf vexp(vf x)
{
    /* Clamped so that n fits the scaling below; the operand order lets NaN through (vmax/vmin return their second
       operand when the comparison fails), and NaN then propagates through every step to the result. */
    vf xc = vmin(vset1(88.75f), vmax(vset1(-104.0f), x));
    vi ni;
    vf n = sb_vm_rint(xc * vset1(1.44269504088896341f), &ni);
    vf r = vfmadd(n, vset1(-0.693359375f), xc);         /* exact: 9-bit constant times |n| <= 151 */
    r = vfmadd(n, vset1(2.12194440e-4f), r);            /* ln2 = 0.693359375 - 2.12194440e-4 */
    vf p = vset1(0.0013814611593261361f);
    p = vfmadd(p, r, vset1(0.008368710055947304f));
    p = vfmadd(p, r, vset1(0.04166838899254799f));
    p = vfmadd(p, r, vset1(0.1666652113199234f));
    p = vfmadd(p, r, vset1(0.4999999403953552f));
    vf y = vfmadd(r * r, p, r) + vset1(1.0f);           /* r == 0 gives exactly 1 */
    /* 2^n in two factors, each a normal number for n in [-150, 128]; only the second product can round. */
    vi n1 = ni >> 1, n2 = ni - n1;
    y = y * vfloat_bits((n1 + 127) << 23);
    return y * vfloat_bits((n2 + 127) << 23);
}

/* log(x) = e*ln2 + log1p(f), x = 2^e * (1 + f), 1 + f in [sqrt(1/2), sqrt(2)); log1p(f) = f - f^2/2 + f^3 Q(f). */
SB_INLINE vf vlog(vf x)
{
    vi tiny = x < vset1(1.17549435e-38f);                 /* subnormals (and <= 0, fixed below) scaled by 2^23 */
    vf xs = vselect(tiny, x * vset1(8388608.0f), x);
    vi bits = vbits(xs);
    vi mant = (bits & vset1i(0x007fffff)) + vset1i(0x3f800000 - 0x3f3504f3);
    vi e = ((bits >> 23) & vset1i(0xff)) - vset1i(127) - (tiny & vset1i(23));
    e = e + (mant >> 23);                                 /* 1 when the mantissa is >= sqrt(2): use m/2 */
    vf m = vfloat_bits((mant & vset1i(0x007fffff)) + vset1i(0x3f3504f3));
    vf f = m - vset1(1.0f);                               /* exact */
    vf ef = __builtin_convertvector(e, vf);
    vf q = vset1(-0.07634437829256058f);
    q = vfmadd(q, f, vset1(0.12761563062667847f));
    q = vfmadd(q, f, vset1(-0.1316019743680954f));
    q = vfmadd(q, f, vset1(0.14201760292053223f));
    q = vfmadd(q, f, vset1(-0.16623355448246002f));
    q = vfmadd(q, f, vset1(0.20001226663589478f));
    q = vfmadd(q, f, vset1(-0.250008225440979f));
    q = vfmadd(q, f, vset1(0.3333333134651184f));
    vf f2 = f * f;
    vf y = vfmadd(f2 * f, q, ef * vset1(-2.12194440e-4f));
    y = vfmadd(f2, vset1(-0.5f), y);
    y = vfmadd(ef, vset1(0.693359375f), f + y);
    y = vselect(x == vset1(INFINITY), x, y);
    y = vselect(x == vset1(0.0f), vset1(-INFINITY), y);
    y = vselect(x < vset1(0.0f), vset1(NAN), y);
    return sb_vm_nan_through(x, y);
}

/* erf: |x| < 0.921875: x + x * P(x^2); else sign(x) * (1 - exp(Q(|x|) - x^2)) with Q ~ log(erfc(x)) + x^2, |x| <= 4. */
SB_INLINE vf verf(vf x)
{
    vf ax = vabs(x);
    vf x2 = x * x;
    vf p = vset1(8.125436579575762e-05f);
    p = vfmadd(p, x2, vset1(-0.0008076275698840618f));
    p = vfmadd(p, x2, vset1(0.005194181110709906f));
    p = vfmadd(p, x2, vset1(-0.026856092736124992f));
    p = vfmadd(p, x2, vset1(0.11283622682094574f));
    p = vfmadd(p, x2, vset1(-0.3761262893676758f));
    p = vfmadd(p, x2, vset1(0.12837917f));                /* 2/sqrt(pi) - 1: x + x*p keeps the leading bits exact */
    vf small = vfmadd(x, p, x);
    vf a = vmin(ax, vset1(4.0f));
    vf q = vset1(-2.1118565200595185e-05f);
    q = vfmadd(q, a, vset1(0.00043473445111885667f));
    q = vfmadd(q, a, vset1(-0.004172380082309246f));
    q = vfmadd(q, a, vset1(0.02512289397418499f));
    q = vfmadd(q, a, vset1(-0.10828544944524765f));
    q = vfmadd(q, a, vset1(0.36665797233581543f));
    q = vfmadd(q, a, vset1(-1.1295173168182373f));
    q = vfmadd(q, a, vset1(0.0001751854142639786f));
    vf large = sb_vm_copysign(vset1(1.0f) - vexp(vfmadd(a, -a, q)), x);
    return sb_vm_nan_through(x, vselect(ax < vset1(0.921875f), small, large));
}

/* tanh: |x| < 0.625: x + x^3 P(x^2); else sign(x) * (1 - 2 / (exp(2|x|) + 1)), |x| clamped to 10 (tanh == 1). */
SB_INLINE vf vtanh(vf x)
{
    vf ax = vabs(x);
    vf x2 = x * x;
    vf p = vset1(0.0021429613698273897f);
    p = vfmadd(p, x2, vset1(-0.008177397772669792f));
    p = vfmadd(p, x2, vset1(0.021700702607631683f));
    p = vfmadd(p, x2, vset1(-0.05394676327705383f));
    p = vfmadd(p, x2, vset1(0.1333320587873459f));
    p = vfmadd(p, x2, vset1(-0.3333333134651184f));
    vf small = vfmadd(x * x2, p, x);
    vf e = vexp(vset1(2.0f) * vmin(ax, vset1(10.0f)));
    vf large = vset1(1.0f) - vset1(2.0f) / (e + vset1(1.0f));
    /* copysign also keeps tanh(-0) == -0, which the polynomial loses (-0 * negative == +0) */
    return sb_vm_nan_through(x, sb_vm_copysign(vselect(ax < vset1(0.625f), small, large), x));
}

/* sin(x) for quadrant offset 0, cos(x) = sin(x + pi/2) for offset 1: x = n*pi/2 + r, |r| <= pi/4. */
SB_INLINE vf sb_vm_sincos(vf x, int offset)
{
    vi ni;
    vf n = sb_vm_rint(x * vset1(0.636619772367581343f), &ni);
    /* pi/2 = C1 + C2 + C3 + C4 + C5; C1..C3 have <= 12 significant bits, so n*Ci is exact for |n| < 2^12, and
       r_hi = x - n*C1 - n*C2 is exact too (a multiple of ulp(x) below 2). r + rl carries the reduced argument in
       float-float so that no rounding of the reduction reaches the result. */
    vf rh = vfmadd(n, vset1(-1.5703125f), x);
    rh = vfmadd(n, vset1(-0.0004837512969970703f), rh);
    vf nc3 = n * vset1(7.549533620476723e-08f);
    vf r = rh - nc3;
    vf rl = (rh - r) - nc3;
    rl = rl - vfmadd(n, vset1(2.5632829192545614e-12f), n * vset1(6.123234262925839e-17f));
    vf r2 = r * r;
    vf s = vset1(-0.00019515282474458218f);
    s = vfmadd(s, r2, vset1(0.00833216030150652f));
    s = vfmadd(s, r2, vset1(-0.16666655242443085f));
    s = r + vfmadd(r * r2, s, rl);                        /* sin(r + rl) ~ sin(r) + rl */
    vf c = vset1(2.4433154976577498e-05f);
    c = vfmadd(c, r2, vset1(-0.0013887316454201937f));
    c = vfmadd(c, r2, vset1(0.04166664555668831f));
    c = vset1(1.0f) + vfmadd(r2 * r2, c, vfmadd(r2, vset1(-0.5f), -(r * rl))); /* cos(r + rl) ~ cos(r) - r*rl */
    vi q = ni + vset1i(offset);
    vf y = vselect((q & 1) != 0, c, s);
    y = vfloat_bits(vbits(y) ^ (vi)((vu)(q & 2) << 30));
    if (!offset)
        y = vselect(x == vset1(0.0f), x, y); /* sin(-0) == -0 */
    vi big = vabs(x) > vset1(6000.0f);
    if (__builtin_expect(sb_vm_any(big), 0)) {
        for (int i = 0; i < SB_W; ++i)
            if (big[i])
                y[i] = offset ? cosf(x[i]) : sinf(x[i]);
    }
    return y;
}

SB_INLINE vf vsin(vf x) { return sb_vm_sincos(x, 0); }
SB_INLINE vf vcos(vf x) { return sb_vm_sincos(x, 1); }

#endif /* SB_VMATH_H */
