"""The alert rule pack (Prometheus rule files), evaluators and the alert history."""
