"""The one facade every transport calls: recall, remember, forget, search_debug, ingest, flush,
profile, lifecycle, import/export, resources. One object, `CortexService`, composed from one
module per capability group; each method validates, delegates to an engine or a store, and
answers."""

from __future__ import annotations

from cortex_mcp.service.browse import BrowseTools
from cortex_mcp.service.conversation import ConversationTools
from cortex_mcp.service.exchange import ExchangeTools
from cortex_mcp.service.memories import MemoryTools
from cortex_mcp.service.status import StatusTools

__all__ = ["CortexService"]


class CortexService(BrowseTools, MemoryTools, ConversationTools, ExchangeTools, StatusTools):
    """recall/remember/forget/search (memories), ingest/flush/profile (conversation),
    lifecycle/export/import/list (exchange), details/stats/health (status), the dashboard's
    table, provenance, restore and system report (browse); the shared state and
    housekeeping (warm-up, drain, close) live in `ServiceCore`."""
