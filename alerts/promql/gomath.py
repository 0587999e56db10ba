"""Go's ``math`` functions where their last bits differ from the C library's (Prometheus 2.42).

Prometheus computes ``exp``, ``ln``, ``log2``, ``log10`` and ``^`` with Go's ``math.Exp``,
``math.Log``, ``math.Log2``, ``math.Log10`` and ``math.Pow``; Python's (glibc's, numpy's)
are correctly rounded or nearly so and differ from Go's by an ulp on many inputs. This
module reimplements the algorithms of Go 1.19 (Debian's promtool 2.42 is built with
go1.19.8), operation by operation in IEEE double arithmetic, so results agree to the bit:

* ``Exp``: on amd64 Go runs the assembly ``src/math/exp_amd64.s`` (Shibata's method, from
  SLEEF: ``x = k ln2 + r``, a degree-8 Taylor polynomial of ``r/16``, four squarings of
  ``expm1``, ``* 2**k`` built from bits). When the CPU has AVX2 and FMA (Go's ``useFMA``;
  every x86-64 since 2013) the reduction and the polynomial use fused multiply-adds, which
  round once: :func:`fma` computes them exactly. ``k = 1024`` overflows to +Inf as there:
  ``exp(709.5)`` is +Inf in Prometheus (checked with promtool 2.42), though finite.
* ``Log``: ``src/math/log_amd64.s`` (FreeBSD's ``e_log.c``: ``log(1+f)`` with ``s = f/(2+f)``
  and a degree-14 polynomial in ``s``), the mantissa split from the bits.
* ``Log2``, ``Log10``: ``src/math/log10.go`` (``Log(frac) * (1/Ln2) + exp``, exact at powers
  of two; ``Log(x) * (1/Ln10)``), the constants rounded once from Go's exact constants.
* ``Pow``: ``src/math/pow.go`` (special cases, ``Exp(yf * Log(x))`` for the fraction of
  ``y`` and repeated squaring with ``Frexp`` for its integer part).
* ``Sin``, ``Cos``, ``Tan`` (Cephes polynomials after reduction by Pi/4 split in three;
  Payne-Hanek reduction with 4/pi's bits beyond 2**29, ``trig_reduce.go``), ``Atan``,
  ``Asin``, ``Acos``, ``Atan2``, ``Sinh``, ``Cosh``, ``Tanh``, ``Asinh``, ``Acosh``, ``Atanh``
  (through ``Log1p``): the pure-Go code amd64 runs.

``sqrt`` needs nothing: Go and C both use the correctly rounded instruction.
"""

from __future__ import annotations

import math
import platform
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np

from alerts.promql.storage import FloatArray


def _cpu_has_fma() -> bool:
    """Go's ``useFMA`` (``cpu.X86.HasAVX2 && cpu.X86.HasFMA``), read from ``/proc/cpuinfo``;
    True where it cannot be read (the usual case of any x86-64 since 2013)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return True
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return True
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[-1].split())
            return "avx2" in flags and "fma" in flags
    return True


USE_FMA = _cpu_has_fma()
"""Whether :func:`go_exp` takes exp_amd64.s' FMA path (as Go does on this CPU)."""

_LN2 = Fraction("0.693147180559945309417232121458176568")  # Go's math.Ln2 (exact constant)
_LN10 = Fraction("2.30258509299404568401799145468436421")  # Go's math.Ln10
_INV_LN2 = float(1 / _LN2)  # Go constant arithmetic is exact; the constant is rounded once
_INV_LN10 = float(1 / _LN10)

_LOG2E = 1.4426950408889634073599246810018920
_LN2U = 0.69314718055966295651160180568695068359375
_LN2L = 0.28235290563031577122588448175013436025525412068e-12
_OVERFLOW = 7.09782712893384e02
_EXP_C = (2.4801587301587301587e-5, 1.9841269841269841270e-4, 1.3888888888888888889e-3,
          8.3333333333333333333e-3, 4.1666666666666666667e-2, 1.6666666666666666667e-1, 0.5, 1.0)
"""exp_amd64.s ``exprodata`` in Horner order (1/8! ... 1/2!, 1)."""

_HSQRT2 = 7.07106781186547524401e-01
_LN2HI = 6.93147180369123816490e-01
_LN2LO = 1.90821492927058770002e-10
_L = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, 2.222219843214978396e-01,
      1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01)


def fma(a: float, b: float, c: float) -> float:
    """``a * b + c`` rounded once (IEEE fused multiply-add; ``math.fma`` of Python 3.13)."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c
    na, da = a.as_integer_ratio()
    nb, db = b.as_integer_ratio()
    nc, dc = c.as_integer_ratio()
    num = na * nb * dc + nc * da * db
    if num == 0:
        return a * b + c  # an exact zero: IEEE's sign rules, as the unfused sum gives them
    return num / (da * db * dc)  # int / int is correctly rounded


def _round_even_i32(v: float) -> int:
    """``CVTSD2SL`` (round to nearest even; the "integer indefinite" -2**31 when out of range)."""
    if not math.isfinite(v) or not -2147483648.5 < v < 2147483647.5:
        return -2147483648
    r = round(v)
    return r if -2147483648 <= r <= 2147483647 else -2147483648


def go_exp(x: float, use_fma: bool | None = None) -> float:
    """Go 1.19's ``math.Exp`` on amd64 (module docstring)."""
    if math.isnan(x) or math.isinf(x):
        return 0.0 if x < 0 else x
    if x > _OVERFLOW:
        return math.inf
    k = _round_even_i32(_LOG2E * x)
    kf = float(k)
    if use_fma if use_fma is not None else USE_FMA:
        r = fma(-_LN2U, kf, x)
        r = fma(-_LN2L, kf, r)
        r *= 0.0625
        p = _EXP_C[0]
        for c in _EXP_C[1:]:
            p = fma(p, r, c)
        y = r * p
        for _ in range(3):
            y *= y + 2.0
        y = fma(y + 2.0, y, 1.0)
    else:
        r = x - _LN2U * kf
        r = r - _LN2L * kf
        r *= 0.0625
        p = _EXP_C[0]
        for c in _EXP_C[1:]:
            p = p * r + c
        y = r * p
        for _ in range(4):
            y *= y + 2.0
        y += 1.0
    e = k + 0x3FF
    if e <= 0:  # subnormal: y * 2**(k + 1022) (exact), then * 2**-1022 (rounds once)
        if e < -52:
            return 0.0
        return (y * math.ldexp(1.0, e - 1)) * math.ldexp(1.0, -1022)
    if e >= 0x7FF:
        return math.inf
    return y * math.ldexp(1.0, e - 0x3FF)


def go_log(x: float) -> float:
    """Go 1.19's ``math.Log`` on amd64 (``log_amd64.s``)."""
    bits = int(np.float64(x).view(np.uint64))
    if bits & ~(1 << 63) == 0:
        return -math.inf
    if bits >> 63:
        return math.nan
    if bits >= 0x7FF0000000000000:
        return x
    f1 = float(np.uint64((bits & 0x000FFFFFFFFFFFFF) | 0x3FE0000000000000).view(np.float64))
    k = float(((bits >> 52) & 0x7FF) - 0x3FE)
    if f1 <= _HSQRT2:  # CMPSD nlt: f1 <= sqrt(2)/2 (log.go: f1 < Sqrt2/2; equal only at one mantissa)
        k -= 1.0
        f1 *= 2.0
    f = f1 - 1.0
    s = f / (2.0 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (((_L[6] * s4 + _L[4]) * s4 + _L[2]) * s4 + _L[0])
    t2 = s4 * ((_L[5] * s4 + _L[3]) * s4 + _L[1])
    big_r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2HI - ((hfsq - (s * (hfsq + big_r) + k * _LN2LO)) - f)


def go_log2(x: float) -> float:
    """Go's ``math.Log2`` (``log10.go``): exact at powers of two."""
    if x == 0 or not math.isfinite(x) or x < 0:
        return go_log(x)
    frac, exp = math.frexp(x)
    if frac == 0.5:
        return float(exp - 1)
    return go_log(frac) * _INV_LN2 + float(exp)


def go_log10(x: float) -> float:
    """Go's ``math.Log10`` (``log10.go``)."""
    return go_log(x) * _INV_LN10


def _is_odd_int(x: float) -> bool:
    if abs(x) >= 2.0**63:
        return False
    xf, xi = math.modf(x)
    return xf == 0 and int(xi) & 1 == 1


def go_pow(x: float, y: float) -> float:
    """Go 1.19's ``math.Pow`` (``pow.go``, pure Go on amd64)."""
    if y == 0 or x == 1:
        return 1.0
    if y == 1:
        return x
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if x == 0:
        if y < 0:
            return math.copysign(math.inf, x) if _is_odd_int(y) else math.inf
        return x if _is_odd_int(y) else 0.0
    if math.isinf(y):
        if x == -1:
            return 1.0
        return 0.0 if (abs(x) < 1) == (y > 0) else math.inf
    if math.isinf(x):
        if x < 0:
            return go_pow(1 / x, -y)
        return 0.0 if y < 0 else math.inf
    if y == 0.5:
        return math.sqrt(x)
    if y == -0.5:
        return 1 / math.sqrt(x)
    yf, yi = math.modf(abs(y))
    if yf != 0 and x < 0:
        return math.nan
    if yi >= 2.0**63:
        if x == -1:
            return 1.0
        return 0.0 if (abs(x) < 1) == (y > 0) else math.inf
    a1 = 1.0
    ae = 0
    if yf != 0:
        if yf > 0.5:
            yf -= 1
            yi += 1
        a1 = go_exp(yf * go_log(x))
    x1, xe = math.frexp(x)
    i = int(yi)
    while i != 0:
        if xe < -(1 << 12) or xe > (1 << 12):
            ae += xe
            break
        if i & 1 == 1:
            a1 *= x1
            ae += xe
        x1 *= x1
        xe <<= 1
        if x1 < 0.5:
            x1 += x1
            xe -= 1
        i >>= 1
    if y < 0:
        a1 = 1 / a1
        ae = -ae
    return _ldexp(a1, ae)


def _ldexp(frac: float, exp: int) -> float:
    """Go's ``math.Ldexp``: ``frac * 2**exp`` rounded once, 0 or ±Inf beyond the range."""
    if frac == 0 or not math.isfinite(frac):
        return frac
    try:
        return math.ldexp(frac, max(-1 << 20, min(1 << 20, exp)))
    except OverflowError:
        return math.copysign(math.inf, frac)


# ---------------------------------------------------------------------------- trigonometry
# sin.go, tan.go (Cephes, reduction by Pi/4 in three parts; Payne-Hanek beyond 2**29 as
# trig_reduce.go), atan.go, asin.go, atan2.go, sinh.go, tanh.go: pure Go on amd64.

_PI = Fraction("3.14159265358979323846264338327950288419716939937510582097494459")  # Go's math.Pi
_4_OVER_PI = float(4 / _PI)
_3PI_4 = float(3 * _PI / 4)
_PI4A, _PI4B, _PI4C = 7.85398125648498535156e-1, 3.77489470793079817668e-8, 2.69515142907905952645e-15
_SIN = (1.58962301576546568060e-10, -2.50507477628578072866e-8, 2.75573136213857245213e-6,
        -1.98412698295895385996e-4, 8.33333333332211858878e-3, -1.66666666666666307295e-1)
_COS = (-1.13585365213876817300e-11, 2.08757008419747316778e-9, -2.75573141792967388112e-7,
        2.48015872888517045348e-5, -1.38888888888730564116e-3, 4.16666666666665929218e-2)
_TAN_P = (-1.30936939181383777646e4, 1.15351664838587416140e6, -1.79565251976484877988e7)
_TAN_Q = (1.0, 1.36812963470692954678e4, -1.32089234440210967447e6, 2.50083801823357915839e7,
          -5.38695755929454629881e7)
_REDUCE_THRESHOLD = float(1 << 29)
_M64 = (1 << 64) - 1


def _four_over_pi_words() -> list[int]:
    """trig_reduce.go ``mPi4``: 4/pi = sum of word[i] * 2**(-64 i), 20 words, computed with
    Machin's formula in integers (1,400 bits, more than the 1,216 the table holds)."""
    bits = 1400
    one = 1 << bits

    def arctan_inv(n: int) -> int:
        total, term, k, sign = 0, one // n, 1, 1
        while term:
            total += sign * (term // k)
            term //= n * n
            k += 2
            sign = -sign
        return total

    pi_fixed = 16 * arctan_inv(5) - 4 * arctan_inv(239)
    scaled = (4 << (bits + 64 * 19)) // pi_fixed  # floor(4/pi * 2**(64*19))
    return [(scaled >> (64 * (19 - i))) & _M64 for i in range(20)]


_MPI4 = _four_over_pi_words()


def _trig_reduce(x: float) -> tuple[int, float]:
    """trig_reduce.go ``trigReduce``: x = j*Pi/4 + z for huge x, with 4/pi to 192 bits."""
    if x < math.pi / 4:
        return 0, x
    ix = int(np.float64(x).view(np.uint64))
    exp = ((ix >> 52) & 0x7FF) - 1023 - 52
    ix = (ix & ~(0x7FF << 52)) | (1 << 52)
    digit, bitshift = (exp + 61) // 64, (exp + 61) % 64

    def word(i: int) -> int:
        hi = (_MPI4[i] << bitshift) & _M64
        return hi | (_MPI4[i + 1] >> (64 - bitshift)) if bitshift else hi

    z0, z1, z2 = word(digit), word(digit + 1), word(digit + 2)
    z2hi = (z2 * ix) >> 64
    z1p = z1 * ix
    z1hi, z1lo = z1p >> 64, z1p & _M64
    z0lo = (z0 * ix) & _M64
    lo = z1lo + z2hi
    carry, lo = lo >> 64, lo & _M64
    hi = (z0lo + z1hi + carry) & _M64
    j = hi >> 61
    hi = ((hi << 3) & _M64) | (lo >> 61)
    lz = 64 - hi.bit_length()
    e = 1023 - (lz + 1)
    hi = ((hi << (lz + 1)) & _M64) | (lo >> (64 - (lz + 1)))
    hi >>= 64 - 52
    hi |= e << 52
    z = float(np.uint64(hi).view(np.float64))
    if j & 1 == 1:
        j = (j + 1) & 7
        z -= 1
    return j, z * (math.pi / 4)


def _octant(x: float) -> tuple[int, float]:
    if x >= _REDUCE_THRESHOLD:
        return _trig_reduce(x)
    j = int(x * _4_OVER_PI)
    y = float(j)
    if j & 1 == 1:
        j += 1
        y += 1
    return j & 7, ((x - y * _PI4A) - y * _PI4B) - y * _PI4C


def _sin_poly(z: float, zz: float) -> float:
    return z + z * zz * (((((_SIN[0] * zz + _SIN[1]) * zz + _SIN[2]) * zz + _SIN[3]) * zz + _SIN[4]) * zz + _SIN[5])


def _cos_poly(zz: float) -> float:
    return 1.0 - 0.5 * zz + zz * zz * (((((_COS[0] * zz + _COS[1]) * zz + _COS[2]) * zz + _COS[3]) * zz
                                        + _COS[4]) * zz + _COS[5])


def go_sin(x: float) -> float:
    """Go's ``math.Sin`` (``sin.go``)."""
    if x == 0 or math.isnan(x):
        return x
    if math.isinf(x):
        return math.nan
    sign = x < 0
    j, z = _octant(-x if sign else x)
    if j > 3:
        sign, j = not sign, j - 4
    zz = z * z
    y = _cos_poly(zz) if j in (1, 2) else _sin_poly(z, zz)
    return -y if sign else y


def go_cos(x: float) -> float:
    """Go's ``math.Cos`` (``sin.go``)."""
    if math.isnan(x) or math.isinf(x):
        return math.nan
    j, z = _octant(abs(x))
    sign = False
    if j > 3:
        j -= 4
        sign = not sign
    if j > 1:
        sign = not sign
    zz = z * z
    y = _sin_poly(z, zz) if j in (1, 2) else _cos_poly(zz)
    return -y if sign else y


def go_tan(x: float) -> float:
    """Go's ``math.Tan`` (``tan.go``)."""
    if x == 0 or math.isnan(x):
        return x
    if math.isinf(x):
        return math.nan
    sign = x < 0
    j, z = _octant(-x if sign else x)
    zz = z * z
    if zz > 1e-14:
        y = z + z * (zz * ((_TAN_P[0] * zz + _TAN_P[1]) * zz + _TAN_P[2])
                     / ((((zz + _TAN_Q[1]) * zz + _TAN_Q[2]) * zz + _TAN_Q[3]) * zz + _TAN_Q[4]))
    else:
        y = z
    if j & 2 == 2:
        y = -1 / y
    return -y if sign else y


def _xatan(x: float) -> float:
    p = (-8.750608600031904122785e-01, -1.615753718733365076637e+01, -7.500855792314704667340e+01,
         -1.228866684490136173410e+02, -6.485021904942025371773e+01)
    q = (2.485846490142306297962e+01, 1.650270098316988542046e+02, 4.328810604912902668951e+02,
         4.853903996359136964868e+02, 1.945506571482613964425e+02)
    z = x * x
    z = z * ((((p[0] * z + p[1]) * z + p[2]) * z + p[3]) * z + p[4]) / (((((z + q[0]) * z + q[1]) * z + q[2]) * z
                                                                          + q[3]) * z + q[4])
    return x * z + x


def _satan(x: float) -> float:
    morebits = 6.123233995736765886130e-17
    if x <= 0.66:
        return _xatan(x)
    if x > 2.41421356237309504880:
        return math.pi / 2 - _xatan(1 / x) + morebits
    return math.pi / 4 + _xatan((x - 1) / (x + 1)) + 0.5 * morebits


def go_atan(x: float) -> float:
    """Go's ``math.Atan`` (``atan.go``)."""
    if x == 0 or math.isnan(x):
        return x
    return _satan(x) if x > 0 else -_satan(-x)


def go_asin(x: float) -> float:
    """Go's ``math.Asin`` (``asin.go``)."""
    if x == 0 or math.isnan(x):
        return x
    sign = x < 0
    x = abs(x)
    if x > 1:
        return math.nan
    temp = math.sqrt(1 - x * x)
    temp = math.pi / 2 - _satan(temp / x) if x > 0.7 else _satan(x / temp)
    return -temp if sign else temp


def go_acos(x: float) -> float:
    """Go's ``math.Acos``: Pi/2 - Asin(x)."""
    return math.pi / 2 - go_asin(x)


def go_atan2(y: float, x: float) -> float:
    """Go's ``math.Atan2`` (``atan2.go``)."""
    if math.isnan(y) or math.isnan(x):
        return math.nan
    if y == 0:
        return math.copysign(0.0, y) if x >= 0 and math.copysign(1.0, x) > 0 else math.copysign(math.pi, y)
    if x == 0:
        return math.copysign(math.pi / 2, y)
    if math.isinf(x):
        if x > 0:
            return math.copysign(math.pi / 4, y) if math.isinf(y) else math.copysign(0.0, y)
        return math.copysign(_3PI_4, y) if math.isinf(y) else math.copysign(math.pi, y)
    if math.isinf(y):
        return math.copysign(math.pi / 2, y)
    q = go_atan(y / x)
    if x < 0:
        return q + math.pi if q <= 0 else q - math.pi
    return q


def go_sinh(x: float) -> float:
    """Go 1.19's ``math.Sinh`` (``sinh.go``)."""
    sign = x < 0
    if sign:
        x = -x
    if x > 21:
        temp = go_exp(x) / 2
    elif x > 0.5:
        ex = go_exp(x)  # Go 1.19: (ex - 1/ex) / 2, as promtool 2.42 computes it
        temp = (ex - 1 / ex) / 2
    else:
        sq = x * x
        temp = (((-0.2630563213397497062819489e+2 * sq - 0.2894211355989563807284660366e+4) * sq
                 - 0.8991272022039509355398013511e+5) * sq - 0.6307673640497716991184787251e+6) * x
        temp = temp / (((sq - 0.173678953558233699533450911e+3) * sq + 0.1521517378790019070696485176e+5) * sq
                       - 0.6307673640497716991212077277e+6)
    return -temp if sign else temp


def go_cosh(x: float) -> float:
    """Go 1.19's ``math.Cosh`` (``sinh.go``: ``(ex + 1/ex) / 2``, which promtool 2.42 matches
    and ``(Exp(x) + Exp(-x)) / 2`` does not)."""
    x = abs(x)
    if x > 21:
        return go_exp(x) / 2
    ex = go_exp(x)
    return (ex + 1 / ex) / 2


def go_tanh(x: float) -> float:
    """Go's ``math.Tanh`` (``tanh.go``)."""
    z = abs(x)
    if z > 0.5 * 8.8029691931113054295988e+01:
        return -1.0 if x < 0 else 1.0
    if z >= 0.625:
        s = go_exp(2 * z)
        z = 1 - 2 / (s + 1)
        return -z if x < 0 else z
    if x == 0:
        return x
    s = x * x
    return x + x * s * ((-9.64399179425052238628e-1 * s - 9.92877231001918586564e1) * s
                        - 1.61468768441708447952e3) / (((s + 1.12811678491632931402e2) * s
                                                        + 2.23548839060100448583e3) * s + 4.84406305325125486048e3)


def _bits(x: float) -> int:
    return int(np.float64(x).view(np.uint64))


def _from_bits(b: int) -> float:
    return float(np.uint64(b).view(np.float64))


def go_log1p(x: float) -> float:
    """Go's ``math.Log1p`` (``log1p.go``, FreeBSD's ``s_log1p.c``; pure Go on amd64)."""
    if x < -1 or math.isnan(x):
        return math.nan
    if x == -1:
        return -math.inf
    if math.isinf(x):
        return math.inf
    absx = abs(x)
    f = 0.0
    iu = 0
    k = 1
    if absx < 4.142135623730950488017e-01:
        if absx < 1.0 / (1 << 29):
            if absx < 1.0 / (1 << 54):
                return x
            return x - x * x * 0.5
        if x > -2.928932188134524755992e-01:
            k, f, iu = 0, x, 1
    c = 0.0
    if k != 0:
        if absx < float(1 << 53):
            u = 1.0 + x
            iu = _bits(u)
            k = (iu >> 52) - 1023
            c = 1.0 - (u - x) if k > 0 else x - (u - 1.0)
            c /= u
        else:
            u = x
            iu = _bits(u)
            k = (iu >> 52) - 1023
            c = 0.0
        iu &= 0x000FFFFFFFFFFFFF
        if iu < 0x0006A09E667F3BCD:
            u = _from_bits(iu | 0x3FF0000000000000)
        else:
            k += 1
            u = _from_bits(iu | 0x3FE0000000000000)
            iu = (0x0010000000000000 - iu) >> 2
        f = u - 1.0
    hfsq = 0.5 * f * f
    kf = float(k)
    if iu == 0:
        if f == 0:
            if k == 0:
                return 0.0
            c += kf * _LN2LO
            return kf * _LN2HI + c
        big_r = hfsq * (1.0 - 0.66666666666666666 * f)
        if k == 0:
            return f - big_r
        return kf * _LN2HI - ((big_r - (kf * _LN2LO + c)) - f)
    s = f / (2.0 + f)
    z = s * s
    big_r = z * (_L[0] + z * (_L[1] + z * (_L[2] + z * (_L[3] + z * (_L[4] + z * (_L[5] + z * _L[6]))))))
    if k == 0:
        return f - (hfsq - s * (hfsq + big_r))
    return kf * _LN2HI - ((hfsq - (s * (hfsq + big_r) + (kf * _LN2LO + c))) - f)


_LN2_ASINH = 6.93147180559945286227e-01


def go_asinh(x: float) -> float:
    """Go's ``math.Asinh`` (``asinh.go``)."""
    if math.isnan(x) or math.isinf(x):
        return x
    sign = x < 0
    if sign:
        x = -x
    if x > float(1 << 28):
        temp = go_log(x) + _LN2_ASINH
    elif x > 2:
        temp = go_log(2 * x + 1 / (math.sqrt(x * x + 1) + x))
    elif x < 1.0 / (1 << 28):
        temp = x
    else:
        temp = go_log1p(x + x * x / (1 + math.sqrt(1 + x * x)))
    return -temp if sign else temp


def go_acosh(x: float) -> float:
    """Go's ``math.Acosh`` (``acosh.go``)."""
    if x < 1 or math.isnan(x):
        return math.nan
    if x == 1:
        return 0.0
    if x >= float(1 << 28):
        return go_log(x) + _LN2_ASINH
    if x > 2:
        return go_log(2 * x - 1 / (x + math.sqrt(x * x - 1)))
    t = x - 1
    return go_log1p(t + math.sqrt(2 * t + t * t))


def go_atanh(x: float) -> float:
    """Go's ``math.Atanh`` (``atanh.go``)."""
    if x < -1 or x > 1 or math.isnan(x):
        return math.nan
    if x == 1:
        return math.inf
    if x == -1:
        return -math.inf
    sign = x < 0
    if sign:
        x = -x
    if x < 1.0 / (1 << 28):
        temp = x
    elif x < 0.5:
        temp = x + x
        temp = 0.5 * go_log1p(temp + temp * x / (1 - x))
    else:
        temp = 0.5 * go_log1p((x + x) / (1 - x))
    return -temp if sign else temp


def vectorize(f: Callable[[float], float]) -> Callable[[FloatArray], FloatArray]:
    """An element-wise numpy version of a scalar function."""
    def apply(values: FloatArray) -> FloatArray:
        return np.fromiter((f(v) for v in values.tolist()), dtype=np.float64, count=values.shape[0])
    return apply


_Binary = Callable[[FloatArray | float, FloatArray | float], FloatArray]


def _binary_arrays(f: Callable[[float, float], float]) -> _Binary:
    def apply(lhs: FloatArray | float, rhs: FloatArray | float) -> FloatArray:
        a, b = np.broadcast_arrays(np.asarray(lhs, dtype=np.float64), np.asarray(rhs, dtype=np.float64))
        out = np.fromiter((f(x, y) for x, y in zip(a.ravel().tolist(), b.ravel().tolist(), strict=True)),
                          dtype=np.float64, count=a.size)
        return out.reshape(a.shape)
    return apply


pow_arrays = _binary_arrays(go_pow)
""":func:`go_pow` element-wise over numpy arrays or scalars (broadcast)."""
atan2_arrays = _binary_arrays(go_atan2)
""":func:`go_atan2` element-wise (``y atan2 x``)."""


__all__ = [
    "USE_FMA",
    "atan2_arrays",
    "fma",
    "go_acos",
    "go_asin",
    "go_atan",
    "go_atan2",
    "go_cos",
    "go_cosh",
    "go_exp",
    "go_log",
    "go_log2",
    "go_log10",
    "go_pow",
    "go_sin",
    "go_sinh",
    "go_tan",
    "go_tanh",
    "pow_arrays",
    "vectorize",
]
