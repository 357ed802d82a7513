"""The store: every SQL statement of cortex-mcp lives in this package."""

from cortex_mcp.store.connection import ConnectorInfo, connector_info
from cortex_mcp.store.database import Database

__all__ = ["ConnectorInfo", "Database", "connector_info"]
