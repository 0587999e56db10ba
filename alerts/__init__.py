"""The alert rule pack (Prometheus rule files), evaluators and the alert history.

* ``alerts/pack/sre-marathon.rules.yaml`` -- the frozen pack (:data:`alerts.rules.PACK_PATH`).
* :class:`alerts.evaluator.AlertEvaluator` -- the embedded evaluator on the virtual clock,
  producing :class:`alerts.evaluator.AlertTransition` lists.
* :class:`alerts.history.AlertHistory` -- the cumulative history operators receive.
* :mod:`alerts.promql` -- the PromQL engine (Prometheus 2.42 semantics).
* :mod:`alerts.live` -- live Prometheus mode (``/metrics`` server, config writer, AlertSource).
* :mod:`alerts.promtool` -- promtool unit-test files from embedded runs.
"""
