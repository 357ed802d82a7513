"""Entities: who memories are about (issue 33). `mentions` holds the linking rules."""
