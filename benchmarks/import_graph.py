"""The house's import graph by room: rooms, arrows between them, and the circles among them.

A *room* is a top-level package (``alerts``, ``faults``, ``scoring``, ``tui``) or, inside
``engine``, a subpackage or a loose module (``engine.sim``, ``engine/cli.py``). An arrow
``a -> b`` means some module of room ``a`` imports one of room ``b`` (at any depth, lazy
imports inside functions included: grimp reads every ``import`` statement). A *circle* is a
strongly connected set of two or more rooms; every arrow inside one runs back up some path.

Usage: python benchmarks/import_graph.py [--arrows]
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import grimp

PACKAGES = ("engine", "faults", "alerts", "scoring", "tui")


def room(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "engine" and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


def room_graph() -> dict[str, set[str]]:
    graph = grimp.build_graph(*PACKAGES)
    arrows: dict[str, set[str]] = defaultdict(set)
    for module in graph.modules:
        src = room(module)
        arrows.setdefault(src, set())
        for imported in graph.find_modules_directly_imported_by(module):
            dst = room(imported)
            if dst != src and dst.split(".")[0] in PACKAGES and dst != "engine":
                arrows[src].add(dst)
    return arrows


def circles(arrows: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with two or more rooms, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(arrows.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(arrows):
        if v not in index:
            visit(v)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arrows", action="store_true", help="list every arrow")
    args = parser.parse_args()
    arrows = room_graph()
    loops = circles(arrows)
    in_loop = {r: i for i, comp in enumerate(loops) for r in comp}
    back = sorted((a, b) for a, dsts in arrows.items() for b in dsts
                  if a in in_loop and in_loop.get(b) == in_loop[a])
    loose = sorted(r for r in arrows if r.startswith("engine.") and r.count(".") == 1
                   and not any(m.startswith(r + ".") for m in grimp.build_graph("engine").modules))
    print(f"rooms {len(arrows)}  arrows {sum(map(len, arrows.values()))}  circles {len(loops)}  "
          f"arrows inside circles {len(back)}  loose engine modules {len(loose)}")
    for comp in loops:
        print("circle: " + " <-> ".join(comp))
    print("loose: " + " ".join(r.removeprefix("engine.") for r in loose))
    if args.arrows:
        for a in sorted(arrows):
            for b in sorted(arrows[a]):
                print(f"  {a} -> {b}")


if __name__ == "__main__":
    main()
