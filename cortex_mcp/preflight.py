"""What a server decides before it opens anything, without importing the engines (the stdio
server answers `initialize` before `runtime` is imported): whether the database can be used,
and which embedding providers the settings select."""

from __future__ import annotations

import importlib.util
import os

from cortex_mcp.config import Settings
from cortex_mcp.store.files import check_database


def openai_key(settings: Settings) -> str | None:
    if settings.embedding_api_key is not None:
        return settings.embedding_api_key.get_secret_value()
    return os.environ.get("OPENAI_API_KEY")


def local_embeddings_installed() -> bool:
    """Whether fastembed is installed, without importing it (its import writes files) or the
    provider module (numpy): `LocalEmbedder.available`."""
    return importlib.util.find_spec("fastembed") is not None


def resolve_embedding_providers(settings: Settings) -> tuple[list[str], list[str]]:
    """Which embedding providers `settings` select, in order, and why others were skipped."""
    chosen: list[str] = []
    notes: list[str] = []
    openai_usable = bool(openai_key(settings) or settings.embedding_base_url)
    for name in settings.embedding_provider.split(","):
        if name == "auto":
            if openai_usable:
                chosen.append("openai")
            elif local_embeddings_installed():
                chosen.append("local")
            else:
                notes.append(
                    "no embedding provider (set OPENAI_API_KEY or CORTEX_EMBEDDING_BASE_URL,"
                    " or install the `local` extra): text search only"
                )
        elif name == "openai" and not openai_usable:
            notes.append(
                "embedding provider openai: no OPENAI_API_KEY or CORTEX_EMBEDDING_BASE_URL"
            )
        elif name == "local" and not local_embeddings_installed():
            notes.append(
                "embedding provider local: install cortex-mcp with its `local` extra (fastembed)"
            )
        elif name != "none":
            chosen.append(name)
    return list(dict.fromkeys(chosen)), notes


def check_storage(settings: Settings) -> None:
    """Refuse to start on a database that cannot be used: a StorageError whose message is the
    one line to show (the path, the cause, what to do). Creates a missing database.
    PostgreSQL (`database_url` set) is checked when it is opened."""
    if settings.database_url is None:
        check_database(settings.db_path, thorough=True)
