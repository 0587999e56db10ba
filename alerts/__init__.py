"""The alert rule packs (Prometheus rule files), evaluators and the alert history.

* ``alerts/pack/sre-marathon.rules.yaml`` -- the frozen ``paper`` pack, the default of every
  scored run: exactly the ten alerting rules of SRE-Marathon Tables 4 and 6
  (:data:`alerts.rules.PACK_PATH`).
* ``alerts/pack/extended.rules.yaml`` -- opt-in rules beyond the paper's (ServiceErrorRate),
  loaded only on top of the paper file as the ``extended`` pack, never the leaderboard default.
* :mod:`alerts.rules` -- rule-file loading and the pack registry: :func:`alerts.rules.load_pack`
  (``paper``, ``extended`` or a rule file's path) and :func:`alerts.rules.pack_identity`, the
  version id and file digests recorded in every bundle.
* :class:`alerts.evaluator.AlertEvaluator` -- the embedded evaluator on the virtual clock,
  producing :class:`alerts.evaluator.AlertTransition` lists.
* :class:`alerts.history.AlertHistory` -- the cumulative history operators receive.
* :mod:`alerts.promql` -- the PromQL engine (Prometheus 2.42 semantics).
* :mod:`alerts.live` -- live Prometheus mode (``/metrics`` server, config writer copying the
  chosen pack's files, AlertSource).
* :mod:`alerts.promtool` -- promtool unit-test files from embedded runs.
"""
