"""Recall: the memory gate, readable reports and the background embedding indexer."""
