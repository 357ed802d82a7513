"""Transports: thin adapters from MCP and HTTP onto the service facade."""
