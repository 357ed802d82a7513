"""`CortexService`, the facade: one class composed of the capability groups."""

from __future__ import annotations

from cortex_mcp.service.browse import BrowseTools
from cortex_mcp.service.conversation import ConversationTools
from cortex_mcp.service.exchange import ExchangeTools
from cortex_mcp.service.memories import MemoryTools
from cortex_mcp.service.status import StatusTools


class CortexService(BrowseTools, MemoryTools, ConversationTools, ExchangeTools, StatusTools):
    """recall/remember/forget/search (memories), ingest/flush/profile (conversation),
    lifecycle/export/import (exchange), stats/health (status), the dashboard's table,
    provenance, restore and system report (browse); the shared state and housekeeping
    (warm-up, drain, close) live in `ServiceCore`, and the plain reads (the listing, one
    memory's details, id prefixes) in its base `MemoryReading`."""
