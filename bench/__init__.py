"""Benchmarks: scripts that print tables (not tests), run from the repository root as
`python bench/<name>.py`."""
