"""Credentials kept in the database: agent tokens (`cortex-mcp token create`) and the
dashboard's sessions. A row holds a token's salt and keyed hash, never the token itself
(service/tokens.py makes and checks them); every server on the same database reads the same
rows, so a revoke reaches all of them."""

from __future__ import annotations

from dataclasses import dataclass

from cortex_mcp.errors import Conflict, NotFound
from cortex_mcp.store.interfaces import Connection, DatabaseHandle, Row

AGENT = "agent"
SESSION = "session"

_COLUMNS = (
    "id, kind, name, agent_id, salt, hash, parent, created_at, last_used_at, expires_at,"
    " revoked_at, scopes"
)


@dataclass(frozen=True)
class TokenRow:
    """One credential. `agent_id` None: a dashboard session opened with the admin token.
    `parent`: the credential a session was opened with (a token id, or the admin token's
    fingerprint)."""

    id: str
    kind: str
    name: str | None
    agent_id: str | None
    salt: str
    hash: str
    parent: str | None
    created_at: str
    last_used_at: str | None = None
    expires_at: str | None = None
    revoked_at: str | None = None
    scopes: str | None = None  # an agent token's rights, space-separated; None: read and write

    def live(self, now: str) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)


def _row(row: Row) -> TokenRow:
    return TokenRow(*(row[i] for i in range(12)))


class TokenStore:
    """Agent tokens and dashboard sessions, the same SQL on both backends."""

    def __init__(self, db: DatabaseHandle) -> None:
        self.db = db

    async def add(self, token: TokenRow) -> TokenRow:
        """Insert `token`; an agent token's name must not be another live token's."""

        def txn(conn: Connection) -> None:
            if token.kind == AGENT and token.name is not None:
                taken = conn.execute(
                    "SELECT id FROM agent_tokens WHERE kind = ? AND name = ?"
                    " AND revoked_at IS NULL",
                    (AGENT, token.name),
                ).fetchone()
                if taken is not None:
                    raise Conflict(
                        f"name: a live token is already named {token.name!r}; choose another"
                        " name or revoke that token first",
                        field="name",
                    )
            conn.execute(
                f"INSERT INTO agent_tokens ({_COLUMNS})"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    token.id,
                    token.kind,
                    token.name,
                    token.agent_id,
                    token.salt,
                    token.hash,
                    token.parent,
                    token.created_at,
                    token.last_used_at,
                    token.expires_at,
                    token.revoked_at,
                    token.scopes,
                ),
            )

        await self.db.transact(txn)
        return token

    async def get(self, token_id: str) -> TokenRow | None:
        row = await self.db.fetchone(
            f"SELECT {_COLUMNS} FROM agent_tokens WHERE id = ?", (token_id,)
        )
        return _row(row) if row is not None else None

    async def agent_tokens(self, *, include_revoked: bool = False) -> list[TokenRow]:
        """The agent tokens, oldest first (the live ones only unless `include_revoked`)."""
        live = "" if include_revoked else " AND revoked_at IS NULL"
        rows = await self.db.fetchall(
            f"SELECT {_COLUMNS} FROM agent_tokens WHERE kind = ?{live} ORDER BY created_at, id",
            (AGENT,),
        )
        return [_row(r) for r in rows]

    async def names(self, prefix: str) -> set[str]:
        """The live agent tokens' names that start with `prefix`."""
        rows = await self.db.fetchall(
            "SELECT name FROM agent_tokens WHERE kind = ? AND revoked_at IS NULL"
            " AND substr(name, 1, ?) = ?",
            (AGENT, len(prefix), prefix),
        )
        return {str(r[0]) for r in rows}

    async def revoke(self, id_or_name: str, now: str) -> TokenRow:
        """Revoke the agent token with this id (or live token with this name), and every
        dashboard session opened with it; returns the token as it was."""

        def txn(conn: Connection) -> TokenRow:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM agent_tokens WHERE kind = ? AND id = ?",
                (AGENT, id_or_name),
            ).fetchone()
            if row is None:  # by name: the live one, else the one revoked last (said so below)
                row = conn.execute(
                    f"SELECT {_COLUMNS} FROM agent_tokens WHERE kind = ? AND name = ?"
                    " ORDER BY revoked_at IS NOT NULL, revoked_at DESC LIMIT 1",
                    (AGENT, id_or_name),
                ).fetchone()
            if row is None:
                raise NotFound(f"token: no token with id or name {id_or_name!r}", field="token")
            token = _row(row)
            if token.revoked_at is not None:
                raise Conflict(
                    f"token: {token.id} was already revoked at {token.revoked_at}", field="token"
                )
            conn.execute(
                "UPDATE agent_tokens SET revoked_at = ? WHERE (id = ? OR parent = ?)"
                " AND revoked_at IS NULL",
                (now, token.id, token.id),
            )
            return token

        return await self.db.transact(txn)

    async def end_session(self, session_id: str, now: str) -> bool:
        def txn(conn: Connection) -> bool:
            cursor = conn.execute(
                "UPDATE agent_tokens SET revoked_at = ? WHERE id = ? AND kind = ?"
                " AND revoked_at IS NULL",
                (now, session_id, SESSION),
            )
            return cursor.rowcount > 0

        return await self.db.transact(txn)

    async def touch(self, token_ids: list[str], now: str) -> None:
        """Record a use of each token (callers batch these: at most once a minute each)."""
        if not token_ids:
            return

        def txn(conn: Connection) -> None:
            conn.executemany(
                "UPDATE agent_tokens SET last_used_at = ? WHERE id = ?",
                [(now, token_id) for token_id in token_ids],
            )

        await self.db.transact(txn)

    async def forget_ended_sessions(self, before: str) -> int:
        """Delete sessions that ended or expired before `before` (they can never open again)."""

        def txn(conn: Connection) -> int:
            cursor = conn.execute(
                "DELETE FROM agent_tokens WHERE kind = ? AND (revoked_at < ? OR expires_at < ?)",
                (SESSION, before, before),
            )
            return cursor.rowcount

        return await self.db.transact(txn)
