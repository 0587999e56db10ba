"""Kubernetes resource quantities: ``"100m"`` CPU and ``"64Mi"`` memory.

The grammar is the one of ``k8s.io/apimachinery/pkg/api/resource``: a decimal number
followed by an optional binary (Ki, Mi, Gi, Ti, Pi, Ei) or decimal (n, u, m, k, M, G,
T, P, E) suffix, or an exponent (``1e3``).
"""

from __future__ import annotations

import re

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
