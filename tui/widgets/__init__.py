"""The panes of the terminal app, one module per concept: header, faults, alerts, actions,
health, timeline, score, notes, output; ``table`` and ``spark`` are shared helpers."""
