"""Calibration from users' measurements: an engine's start-up log read (startup_log.py), the
efficiencies and memory overhead fitted on the planner's own replica (fit.py, on the sizing
core's app/sizing/calibration.py), the row stored (store.py), and which stored calibration a
plan uses and what its answer says about it (basis.py)."""
