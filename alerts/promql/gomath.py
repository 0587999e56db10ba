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


def vectorize(f: Callable[[float], float]) -> Callable[[FloatArray], FloatArray]:
    """An element-wise numpy version of a scalar function."""
    def apply(values: FloatArray) -> FloatArray:
        return np.fromiter((f(v) for v in values.tolist()), dtype=np.float64, count=values.shape[0])
    return apply


def pow_arrays(lhs: FloatArray | float, rhs: FloatArray | float) -> FloatArray:
    """:func:`go_pow` element-wise over numpy arrays or scalars (broadcast)."""
    a, b = np.broadcast_arrays(np.asarray(lhs, dtype=np.float64), np.asarray(rhs, dtype=np.float64))
    out = np.fromiter((go_pow(x, y) for x, y in zip(a.ravel().tolist(), b.ravel().tolist(), strict=True)),
                      dtype=np.float64, count=a.size)
    return out.reshape(a.shape)


__all__ = ["USE_FMA", "fma", "go_exp", "go_log", "go_log2", "go_log10", "go_pow", "pow_arrays", "vectorize"]
