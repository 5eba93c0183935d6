"""The profile tool: PROF-01 … PROF-13."""
