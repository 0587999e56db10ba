"""Scoring: sealed bundle -> per-fault stages -> Marathon-Score, leaderboard, figures."""
