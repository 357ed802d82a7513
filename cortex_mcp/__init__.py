"""cortex-mcp: long-term memory for AI agents, served over MCP."""

__version__ = "0.1.0"
