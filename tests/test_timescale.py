"""The time-scaled rule pack (``marathon prometheus-config --time-scale``) for a cluster faster than the wall clock."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from alerts.live import write_prometheus_config
from alerts.rules import PACK_PATH
from alerts.timescale import duration_ms, format_ms, scale_expr, scale_rules


def test_durations_round_trip() -> None:
    assert duration_ms("1h30m") == 5_400_000 and duration_ms("250ms") == 250
    assert [format_ms(x) for x in (0, 750, 3000, 120_000, 7_200_000)] == ["0s", "750ms", "3s", "2m", "2h"]
    with pytest.raises(ValueError):
        duration_ms("2 minutes")


def test_windows_offsets_and_rates_are_scaled() -> None:
    expr = ('histogram_quantile(0.95, sum by (le) (rate(x_bucket[5m]))) > 3 and sum(irate(y[2m:30s] offset 1m)) '
            '> 0.5 and increase(z{a="[1m]"}[10m]) > 0 and max_over_time(k[2m]) and deirate_not(q[1m])')
    assert scale_expr(expr, 20) == (
        'histogram_quantile(0.95, sum by (le) ((rate(x_bucket[15s]) / 20))) > 3 and sum((irate(y[6s:1500ms] '
        'offset 3s) / 20)) > 0.5 and increase(z{a="[1m]"}[30s]) > 0 and max_over_time(k[6s]) and deirate_not(q[3s])')
    assert scale_expr(expr, 1) == expr
    assert scale_expr('rate(x{a=~"(a|b)\\"("}[1m])', 2) == '(rate(x{a=~"(a|b)\\"("}[30s]) / 2)'


def test_the_shipped_pack_scaled_is_valid_and_keeps_names(tmp_path: Path) -> None:
    data = yaml.safe_load(PACK_PATH.read_text())
    scaled = scale_rules(data, 20)
    before = [r for g in data["groups"] for r in g["rules"]]
    after = [r for g in scaled["groups"] for r in g["rules"]]
    assert [r.get("alert") for r in before] == [r.get("alert") for r in after]
    assert [r.get("labels") for r in before] == [r.get("labels") for r in after]
    fors = {r["alert"]: r.get("for") for r in after if "alert" in r}
    assert fors["DeploymentNotReady"] == "3s" and fors["FailedPodsDetected"] == "0s"
    cfg = write_prometheus_config(tmp_path / "p", ["127.0.0.1:1"], time_scale=20)
    assert yaml.safe_load(cfg.read_text())["global"] == {"scrape_interval": "750ms", "evaluation_interval": "750ms"}
    promtool = shutil.which("promtool")
    if promtool is None:
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail("promtool is required in CI")
        pytest.skip("promtool not installed")
    files = [str(p) for p in (tmp_path / "p").glob("*.yaml") if p.name != "prometheus.yml"]
    out = subprocess.run([promtool, "check", "rules", *files], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
