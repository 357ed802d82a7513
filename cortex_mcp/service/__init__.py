"""The one facade every transport calls: recall, remember, forget, search_debug, ingest, flush,
profile, lifecycle, import/export, resources. One object, `CortexService`, composed from one
module per capability group; each method validates, delegates to an engine or a store, and
answers."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cortex_mcp.service.facade import CortexService

__all__ = ["CortexService"]


def __getattr__(name: str) -> object:
    """The facade is imported when first asked for, so that importing one group alone
    (`service.reading`, for the CLI's `list` and `show`) does not import every engine."""
    if name == "CortexService":
        from cortex_mcp.service.facade import CortexService

        return CortexService
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
