"""Engine: one package per capability (recall, ingest, lifecycle, exchange) and the rules they share (validation, redaction, health)."""
