"""Providers: LLMs and embedding models behind small protocols."""
