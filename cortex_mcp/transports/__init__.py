"""Transports: thin adapters from MCP and HTTP onto the services."""
