"""Worked examples as readable modules (the demo command runs them)."""
