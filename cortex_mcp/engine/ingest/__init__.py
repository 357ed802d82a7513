"""Ingest: conversation turns in, memories out (sieve, signals, LLM extraction, flush, profile)."""
