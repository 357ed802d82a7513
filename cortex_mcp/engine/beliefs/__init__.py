"""Beliefs: what the memory has come to believe, with the evidence for and against it."""
