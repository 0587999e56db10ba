"""How the apps' services build: the build pipeline's time model and which files need no build.

The simulated build pipeline (:mod:`engine.sim.source`, :meth:`engine.substrate.Substrate.deploy_change`)
and the fault time model (:mod:`faults.timing`, the schedule generator) share these numbers.
A real cluster's CI takes whatever it takes; these are the simulator's modeled values.
"""

from __future__ import annotations

_BUILD_S = {
    "go": 45.0,
    "rust": 90.0,
    "cpp": 120.0,
    "java": 150.0,
    "kotlin": 150.0,
    "csharp": 90.0,
    "nodejs": 40.0,
    "typescript": 75.0,
    "python": 35.0,
    "ruby": 40.0,
    "php": 35.0,
    "elixir": 80.0,
}
"""Modeled CI build-and-push time per language, seconds (compile + image push on a small
CI runner; order of magnitude from typical GitHub Actions builds of these demos)."""


CONFIG_SUFFIXES = (".json", ".yaml", ".yml", ".conf", ".toml", ".properties", ".env", ".ini")
"""Files that roll out as configuration (a ConfigMap), without a CI build."""


def build_seconds(language: str) -> float:
    """Modeled build time of a service's image, seconds (30 s for config-only images)."""
    return _BUILD_S.get(language, 30.0)
