"""Exact Kubernetes resource quantities, with ``k8s.io/apimachinery`` semantics.

kubectl prints quantities in canonical form (``Quantity.String()``): ``0.5`` -> ``500m``,
``1024Mi`` -> ``1Gi``, ``1536Mi`` stays ``1536Mi``, and sums keep the format of their
first non-zero term (``staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go``,
``CanonicalizeBytes`` and ``Add``). Values are held as exact fractions rounded up to
nano units, as ``ParseQuantity`` does.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BINARY_SUFFIX = {0: "", **{v: k for k, v in _BINARY.items()}}
_RE = re.compile(r"^([+-]?)(\d*)(?:\.(\d*))?(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$")
_NANO = 10**9


@dataclass(frozen=True)
class Quantity:
    """A resource quantity: an exact value and the format it prints in.

    Attributes:
        value: the amount in base units (cores, bytes, pods), exact.
        format: ``BinarySI``, ``DecimalSI`` or ``DecimalExponent``.
    """

    value: Fraction = Fraction(0)
    format: str = DECIMAL_SI

    @classmethod
    def parse(cls, text: str | int) -> Quantity:
        """``resource.ParseQuantity``.

        Raises:
            ValueError: not a quantity.
        """
        if isinstance(text, int):
            return cls(Fraction(text), DECIMAL_SI)
        m = _RE.match(text.strip())
        if m is None or not (m.group(2) or m.group(3)):
            raise ValueError("quantities must match the regular expression "
                             f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}")
        sign, whole, frac, exp, suffix = m.groups()
        number = Fraction(int((whole or "0") + (frac or "")), 10 ** len(frac or ""))
        if exp:
            value, fmt = number * Fraction(10) ** int(exp[1:]), DECIMAL_EXPONENT
        elif suffix in _BINARY:
            value, fmt = number * 1024 ** _BINARY[suffix], BINARY_SI
        else:
            value, fmt = number * Fraction(10) ** _DECIMAL[suffix or ""], DECIMAL_SI
        value = Fraction(math.ceil(value * _NANO), _NANO)  # round up to nano units
        return cls(-value if sign == "-" else value, fmt)

    def __add__(self, other: Quantity) -> Quantity:
        fmt = other.format if self.value == 0 else self.format
        return Quantity(self.value + other.value, fmt)

    def milli_value(self) -> int:
        """``MilliValue()``: thousandths, rounded up."""
        return math.ceil(self.value * 1000)

    def int_value(self) -> int:
        """``Value()``: rounded up to an integer."""
        return math.ceil(self.value)

    def __str__(self) -> str:
        value = self.value
        if value == 0:
            return "0"
        fmt = self.format
        if fmt == BINARY_SI and (-1024 < value < 1024 or value.denominator != 1):
            fmt = DECIMAL_SI
        neg = value < 0
        sign = "-" if neg else ""
        if fmt == BINARY_SI:
            amount, exp = abs(value.numerator), 0
            while amount % 1024 == 0 and exp < 6:
                amount //= 1024
                exp += 1
            return f"{sign}{amount}{_BINARY_SUFFIX[exp]}"
        mantissa, exponent = abs(int(value * _NANO)), -9
        while mantissa % 10 == 0:
            mantissa //= 10
            exponent += 1
        if exponent % 3 == 1:
            mantissa, exponent = mantissa * 10, exponent - 1
        elif exponent % 3 == 2:
            mantissa, exponent = mantissa * 100, exponent - 2
        if fmt == DECIMAL_SI and exponent in _DECIMAL_SUFFIX:
            return f"{sign}{mantissa}{_DECIMAL_SUFFIX[exponent]}"
        return f"{sign}{mantissa}" + (f"e{exponent}" if exponent else "")


def canonical(text: str | int) -> str:
    """The canonical spelling kubectl prints for a quantity (``"0.5"`` -> ``"500m"``)."""
    return str(Quantity.parse(text))

# Float views, for the model and the simulator

_SUFFIX = {
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    "": 1.0,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
    "Pi": 2.0**50,
    "Ei": 2.0**60,
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$")


def parse_quantity(text: str | int | float) -> float:
    """Parse a Kubernetes quantity into a plain number.

    Args:
        text: ``"250m"`` (0.25 CPU cores), ``"64Mi"`` (67108864 bytes), ``2``, ``"1.5"``.

    Returns:
        The value in base units: CPU cores for CPU, bytes for memory.

    Raises:
        ValueError: the text is not a Kubernetes quantity.
    """
    if isinstance(text, bool):
        raise ValueError(f"not a Kubernetes quantity: {text!r}")
    if isinstance(text, (int, float)):
        return float(text)
    match = _QUANTITY.match(text.strip())
    if match is None:
        raise ValueError(f"not a Kubernetes quantity: {text!r} (expected e.g. '100m', '64Mi', '1.5')")
    number, exponent, suffix = match.groups()
    if exponent:
        return float(number + exponent)
    return float(number) * _SUFFIX[suffix or ""]


def format_cpu(cores: float) -> str:
    """Format CPU cores as kubectl does: ``0.1`` -> ``"100m"``, ``2.0`` -> ``"2"``."""
    millis = round(cores * 1000)
    if millis % 1000 == 0:
        return str(millis // 1000)
    return f"{millis}m"


def format_memory(num_bytes: float) -> str:
    """Format bytes with the largest exact binary suffix: ``67108864`` -> ``"64Mi"``."""
    value = round(num_bytes)
    for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        unit = int(_SUFFIX[suffix])
        if value >= unit and value % unit == 0:
            return f"{value // unit}{suffix}"
    return str(value)
