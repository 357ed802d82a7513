"""Lifecycle: decay, promotion, merge, archive and compression, planned then applied, on a schedule."""
