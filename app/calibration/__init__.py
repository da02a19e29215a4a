"""Calibration from users' measurements: start-up logs and benchmark points."""
