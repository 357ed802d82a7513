"""Engine: the memory gate, ingest, lifecycle, profile and mirrors."""
