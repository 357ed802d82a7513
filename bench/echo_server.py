"""The transport floor for bench/latency.py: one echo tool on the same MCP SDK over stdio.

python bench/echo_server.py     # speaks MCP on stdin/stdout
"""

from __future__ import annotations

import logging

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("echo", version="0")


@mcp.tool()
async def echo(text: str) -> str:
    """Return `text` unchanged."""
    return text


if __name__ == "__main__":
    logging.disable(logging.INFO)
    mcp.run("stdio")
