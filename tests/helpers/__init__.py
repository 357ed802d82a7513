"""Shared helpers of the tests and benches: stubs, servers as subprocesses, seeded stores, tables."""
