"""Benchmark: can the build pipeline's log tell a fault's change from a benign one?

Runs the no-op marathon of each app for several seeds (in memory, no alerts), takes every
row of the pipeline log that ``get_deploy_history`` shows, labels it from ground truth (a
fault's change or its revert: 1; a benign change or a benign revert: 0), and trains a
logistic regression on operator-visible features only -- the author (one-hot), the words
of the summary (bag of words), the time of day of the submission and the size of the
change (lines of the commit's diff, or pod-template fields changed) -- on some seeds,
then scores the held-out seeds by ROC AUC. 0.5 means the log says nothing about which
change is a fault's; issue 12 asks for at most 0.65. ``--kind`` adds the change kind
(code, config, image, ...) as a feature.

Usage: python benchmarks/bench_deploy_blind.py [--apps a,b,c] [--train 1,2,3] [--test 4,5] [--kind]
"""

from __future__ import annotations

import argparse
import difflib
import math
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np

from engine.run.orchestrator import Orchestrator
from engine.sim.k8s import EPOCH
from faults.generator import generate

APPS = ("online-boutique", "astronomy-shop", "train-ticket")
AUC_MAX = 0.65


@dataclass(frozen=True)
class Row:
    """One pipeline-log row as an operator sees it, and its ground-truth label."""

    app: str
    seed: int
    change: str
    service: str
    kind: str
    author: str
    summary: str
    t_submitted: float
    size: int
    fault: bool


def _lines_changed(before: str, after: str) -> int:
    return sum(1 for d in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
               if d[:1] in "+-" and not d.startswith(("+++", "---")))


def _template_fields(old: Any, new: Any) -> int:
    """Pod-template fields a change set (what ``kubectl rollout history --revision`` shows)."""
    n = 0
    old_env, new_env = dict(old.env), dict(new.env)
    n += sum(1 for k in set(old_env) | set(new_env) if old_env.get(k) != new_env.get(k))
    for name in ("image", "resources", "readiness_probe", "liveness_probe"):
        n += int(getattr(old, name) != getattr(new, name))
    return n


def history(app: str, seed: int, regime: str = "marathon") -> list[Row]:
    """Run the no-op marathon of (app, seed) and return its pipeline log, labelled."""
    run = Orchestrator(generate(app, seed, regime), alert_source=None)
    sim = run.sim
    fields: dict[str, int] = {}
    apply = sim._apply_template

    def recording(rec: Any, template: Any) -> None:
        fields[rec.id] = _template_fields(sim.cluster.workloads[rec.service].template, template)
        apply(rec, template)

    sim._apply_template = recording  # type: ignore[method-assign]
    run.run()
    truth: set[str] = set()
    for rec in run.faults.values():
        if rec.instance is not None:
            truth.update(c.id for c in rec.instance.changes)
            truth.update(c.id for c in rec.instance.revert_changes)
    rows = []
    for r in sim.deploy_history():
        size = fields.get(r.id, 1)
        if r.commit:
            repo = sim.repos[r.service]
            commit = repo.get(r.commit)
            parent = repo.get(commit.parent) if commit.parent else commit
            size = sum(_lines_changed(parent.files.get(p, ""), commit.files.get(p, ""))
                       for p in set(parent.files) | set(commit.files)
                       if parent.files.get(p) != commit.files.get(p))
        rows.append(Row(app, seed, r.id, r.service, r.kind, r.author, r.summary, r.t_submitted, size,
                        r.id in truth))
    return rows


def _tokens(summary: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", summary.lower()))


def _size_bucket(n: int) -> str:
    for hi, name in ((0, "0"), (1, "1"), (2, "2"), (4, "3-4"), (8, "5-8"), (16, "9-16")):
        if n <= hi:
            return name
    return "17+"


def features(row: Row, kind: bool = False) -> dict[str, float]:
    """Operator-visible features of one row (sparse: name -> value)."""
    when = EPOCH + timedelta(seconds=row.t_submitted)
    hour = when.hour + when.minute / 60 + when.second / 3600
    out: dict[str, float] = {f"author={row.author}": 1.0}
    out.update({f"word={w}": 1.0 for w in _tokens(row.summary)})
    out["hour"] = hour - 10.0
    out["hour_sin"] = math.sin(2 * math.pi * hour / 24)
    out["hour_cos"] = math.cos(2 * math.pi * hour / 24)
    out[f"quarter={int(hour * 4)}"] = 1.0
    out["log_size"] = math.log1p(row.size)
    out[f"size={_size_bucket(row.size)}"] = 1.0
    if kind:
        out[f"kind={row.kind}"] = 1.0
    return out


def _matrix(rows: list[Row], names: dict[str, int], kind: bool) -> np.ndarray:
    x = np.zeros((len(rows), len(names)))
    for i, row in enumerate(rows):
        for k, v in features(row, kind).items():
            j = names.get(k)
            if j is not None:
                x[i, j] = v
    return x


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 3000,
                 lr: float = 0.5) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by gradient descent; returns (weights, bias)."""
    w = np.zeros(x.shape[1])
    b = 0.0
    n = len(y)
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
        g = p - y
        w -= lr * (x.T @ g / n + l2 * w / n)
        b -= lr * float(g.mean())
    return w, b


def roc_auc(y: np.ndarray, score: np.ndarray) -> float:
    """ROC AUC (Mann-Whitney U with ties counted half)."""
    pos, neg = score[y == 1], score[y == 0]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(pos) * len(neg)))


def held_out_auc(train: list[Row], test: list[Row], kind: bool = False) -> float:
    """Train on ``train``, return the ROC AUC on ``test``."""
    names: dict[str, int] = {}
    for row in train:
        for k in features(row, kind):
            names.setdefault(k, len(names))
    xtr, xte = _matrix(train, names, kind), _matrix(test, names, kind)
    mu, sd = xtr.mean(axis=0), xtr.std(axis=0) + 1e-9
    ytr = np.asarray([r.fault for r in train], dtype=float)
    yte = np.asarray([r.fault for r in test], dtype=float)
    w, b = fit_logistic((xtr - mu) / sd, ytr)
    return roc_auc(yte, (xte - mu) / sd @ w + b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default=",".join(APPS))
    parser.add_argument("--train", default="1,2,3")
    parser.add_argument("--test", default="4,5")
    parser.add_argument("--kind", action="store_true", help="also report the AUC with the change kind")
    args = parser.parse_args()
    train_seeds = [int(s) for s in args.train.split(",")]
    test_seeds = [int(s) for s in args.test.split(",")]
    rows = {(app, seed): history(app, seed) for app in args.apps.split(",") for seed in train_seeds + test_seeds}
    train = [r for (_, seed), rs in rows.items() if seed in train_seeds for r in rs]
    test = [r for (_, seed), rs in rows.items() if seed in test_seeds for r in rs]
    print(f"{len(train)} training rows ({sum(r.fault for r in train)} fault), {len(test)} held-out rows "
          f"({sum(r.fault for r in test)} fault)")
    print(f"held-out ROC AUC (author, summary words, time of day, diff size): {held_out_auc(train, test):.3f} "
          f"(issue 12: <= {AUC_MAX})")
    if args.kind:
        print(f"held-out ROC AUC with the change kind as well: {held_out_auc(train, test, kind=True):.3f}")


if __name__ == "__main__":
    main()
