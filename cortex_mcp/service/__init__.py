"""The services every transport calls, one per noun (memories, reading, conversation,
lifecycle, exchange, relations, browse, status), held together by `CortexService`. Each method
validates, delegates to an engine or a store, and answers."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cortex_mcp.service.cortex import CortexService

__all__ = ["CortexService"]


def __getattr__(name: str) -> object:
    """The service is imported when first asked for, so that importing one noun alone
    (`service.reading`, for the CLI's `list` and `show`) does not import every engine."""
    if name == "CortexService":
        from cortex_mcp.service.cortex import CortexService

        return CortexService
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
