"""Fault specs, the fault catalog, qualification and the schedule generator."""
