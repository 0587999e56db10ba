"""Catalog counts per app, category and code-bug subtype, against SRE-Marathon's Table 3.

:data:`TABLE3` is the paper's catalog shape (code-bug faults per defect subtype and app, quoted in
DESIGN section 9); :func:`catalog_counts` counts a loaded catalog (``for_each`` entries count once
per instance, as the schedule draws them) and :func:`format_counts` prints the table
``marathon app catalog`` shows. Pure functions of the catalog files: no simulator is needed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import get_args

from faults.spec import Catalog, Category, Subtype

CATEGORIES: tuple[str, ...] = get_args(Category)
"""Fault categories in the order the table prints them (:data:`faults.spec.Category`)."""
SUBTYPES: tuple[str, ...] = get_args(Subtype)
"""Code-bug subtypes in Table 3's order (:data:`faults.spec.Subtype`)."""

TABLE3: dict[str, dict[str, int]] = {
    "astronomy-shop": {"feature-logic": 48, "constant-flag": 5, "component-incompatibility": 23,
                       "type-validation": 29, "backward-incompatibility": 45},
    "online-boutique": {"feature-logic": 6, "constant-flag": 6, "component-incompatibility": 6,
                        "type-validation": 6, "backward-incompatibility": 8},
    "train-ticket": {"feature-logic": 6, "constant-flag": 6, "component-incompatibility": 6,
                     "type-validation": 6, "backward-incompatibility": 8},
}
"""Code-bug faults per subtype and app in SRE-Marathon's Table 3 (DESIGN section 9): 150 for
Astronomy Shop, 32 each for Online Boutique and Train Ticket. An app the paper does not list has
no target."""


@dataclass(frozen=True)
class CatalogCounts:
    """Fault counts of one app's catalog.

    Attributes:
        app: the app name.
        total: faults in the catalog (``for_each`` instances counted one by one).
        categories: faults per category, every category of :data:`CATEGORIES` present (0 if none).
        subtypes: code-bug faults per subtype, every subtype of :data:`SUBTYPES` present.
        table3: Table 3's count per subtype, or an empty dict for an app the paper does not list.
    """

    app: str
    total: int
    categories: dict[str, int]
    subtypes: dict[str, int]
    table3: dict[str, int]

    def short(self) -> dict[str, int]:
        """Subtypes below Table 3's count, with how many faults each lacks (empty: meets the table)."""
        return {s: need - self.subtypes[s] for s, need in self.table3.items() if self.subtypes[s] < need}

    @property
    def meets_table3(self) -> bool:
        """Whether every subtype has at least Table 3's count (True for an app without a target)."""
        return not self.short()


def catalog_counts(catalog: Catalog) -> CatalogCounts:
    """Count ``catalog``'s faults per category and code-bug subtype (module docstring)."""
    cats: Counter[str] = Counter(f.category for f in catalog.faults)
    subs: Counter[str] = Counter(f.subtype for f in catalog.faults if f.category == "code-bug" and f.subtype)
    return CatalogCounts(app=catalog.app, total=len(catalog.faults),
                         categories={c: cats[c] for c in CATEGORIES},
                         subtypes={s: subs[s] for s in SUBTYPES},
                         table3=dict(TABLE3.get(catalog.app, {})))


def format_counts(counts: list[CatalogCounts]) -> str:
    """The table ``marathon app catalog`` prints: per app, the faults per category, then the
    code-bug faults per subtype beside Table 3's count and ``ok`` or how many are missing."""
    lines: list[str] = []
    for c in counts:
        if lines:
            lines.append("")
        lines.append(f"{c.app}: {c.total} faults")
        lines.append(f"  {'CATEGORY':28} {'FAULTS':>6}")
        lines.extend(f"  {cat:28} {c.categories[cat]:>6}" for cat in CATEGORIES)
        lines.append(f"  {'CODE-BUG SUBTYPE':28} {'FAULTS':>6} {'TABLE 3':>7}  STATUS")
        short = c.short()
        for sub in SUBTYPES:
            need = c.table3.get(sub)
            status = "-" if need is None else (f"{short[sub]} short" if sub in short else "ok")
            lines.append(f"  {sub:28} {c.subtypes[sub]:>6} {'-' if need is None else need:>7}  {status}")
        total_need = sum(c.table3.values()) if c.table3 else None
        lines.append(f"  {'total':28} {c.categories['code-bug']:>6} {'-' if total_need is None else total_need:>7}  "
                     f"{'-' if not c.table3 else ('ok' if c.meets_table3 else 'below Table 3')}")
    return "\n".join(lines)
