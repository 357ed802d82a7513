"""The read-only assembly: the database and the stores that `MemoryReading` reads, and nothing
else. The people's `list` and `show` open this instead of the whole service (`runtime.py`),
so that a script calling them many times does not pay for the engines, providers and numpy."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from cortex_mcp.config import Settings
from cortex_mcp.service.reading import MemoryReading
from cortex_mcp.store.backend import open_database, store_classes
from cortex_mcp.store.memories import LayerTtl


def layer_ttl(settings: Settings) -> LayerTtl:
    """How long a memory stays in the working layer and in the archive."""
    return LayerTtl(
        working=timedelta(hours=settings.layers.working_ttl_hours),
        archive=timedelta(days=settings.layers.archive_ttl_days),
    )


@asynccontextmanager
async def open_reader(settings: Settings) -> AsyncIterator[MemoryReading]:
    async with open_database(settings, allow_vec=False) as db:
        stores = store_classes(db)
        yield MemoryReading(
            settings=settings,
            memories=stores.memories(db, layer_ttl(settings)),
            exports=stores.exports(db),
            relations=stores.relations(db),
        )
