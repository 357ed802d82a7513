"""Settings seen and changed while running (`GET|PATCH /api/v1/config`, `cortex-mcp config`).

A change is checked by the settings model as a whole (nothing is kept unless every value is
valid), written to the database as one versioned document (`store/settings.py`), applied to
this process's `LiveSettings` and logged with who made it and the old and new values (secrets
masked). Every other server on the database reads the document's version each
`POLL_SECONDS` and applies a newer one: a change reaches them all within about a second.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from cortex_mcp.config_live import LiveSettings, plain, set_by_environment, shown
from cortex_mcp.config_live import value_of as setting_value
from cortex_mcp.errors import ConfigError, CortexError, Forbidden, InvalidSetting
from cortex_mcp.models import LOCAL, Caller
from cortex_mcp.service.requests import SettingsChangeRequest
from cortex_mcp.store.settings import SettingsStore

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0


def who(caller: Caller) -> str:
    if caller.is_agent:
        return f"agent {caller.agent_id} (token {caller.token_id})"
    if caller.kind == "admin":
        return "the admin" + (f" (session of token {caller.token_id})" if caller.token_id else "")
    return "the command line"


def _check_schedule(expression: str) -> None:
    """A cron's fields in range (the settings model checks only that there are five)."""
    if expression.strip().lower() in ("", "off"):
        return
    # imported here: list and show open the reader, which holds this service, without the
    # lifecycle engine (tests/test_cli_commands.py)
    from cortex_mcp.engine.lifecycle.schedule import parse_cron

    try:
        parse_cron(expression)
    except ConfigError as exc:
        rule = exc.message.split(": ", 1)[-1]  # without the variable's name
        raise InvalidSetting(f"lifecycle.schedule: {rule}", field="lifecycle.schedule") from None


@dataclass(kw_only=True)
class ConfigService:
    live: LiveSettings
    store: SettingsStore
    caller: Caller = LOCAL  # who is asking (CortexService.acting_for)

    def _admin_only(self) -> None:
        if self.caller.is_agent:
            raise Forbidden(
                "settings: only the admin token (CORTEX_API_TOKEN) or the command line sees"
                " and changes settings; an agent token cannot",
                field="settings",
            )

    async def get(self) -> dict[str, Any]:
        """Every setting with its value (secrets masked), source, whether it changes live,
        its variable and description."""
        self._admin_only()
        await self.refresh()
        return {"version": self.live.version, "settings": self.live.describe()}

    async def change(self, request: SettingsChangeRequest) -> dict[str, Any]:
        """Apply a partial document (null: back to the file's or the default value); refused
        whole (InvalidSetting naming the setting and the rule) when any part is invalid."""
        self._admin_only()
        flat = request.changes
        await self.refresh()  # the old values logged are the ones in effect
        layer = await self.store.read()
        values = dict(layer.values)
        for name, value in flat.items():
            if value is None:
                values.pop(name, None)
            else:
                values[name] = value
        checked = self.live.checked(values)  # raises before anything is written
        _check_schedule(checked.lifecycle.schedule)
        values = {name: plain(setting_value(checked, name)) for name in values}
        before = {name: setting_value(self.live.current, name) for name in flat}
        stored = await self.store.write(values, layer.version)
        changed = self.live.apply(stored.version, stored.values)
        overridden = [
            {"name": name, "variable": env}
            for name in flat
            if (env := set_by_environment(name, self.live.environ))
        ]
        for name in flat:
            log.info(
                "setting %s changed by %s: %s -> %s%s",
                name,
                who(self.caller),
                shown(name, before[name]),
                shown(name, flat[name] if flat[name] is None else values.get(name)),
                " (the environment's value stays in effect)"
                if set_by_environment(name, self.live.environ)
                else "",
            )
        return {
            "version": stored.version,
            "changed": changed,
            "overridden": overridden,
            "settings": self.live.describe(),
        }

    async def refresh(self) -> list[str]:
        """Apply the database's document if another server or command changed it."""
        layer = await self.store.read()
        if layer.version == self.live.version:
            return []
        changed = self.live.apply(layer.version, layer.values)
        if changed:
            log.info("settings version %d applied: %s", layer.version, ", ".join(changed))
        return changed

    async def follow(self) -> None:
        """Poll for changes made elsewhere until cancelled; a fault is logged once, then
        retried at the next poll."""
        failing = False
        while True:
            await asyncio.sleep(POLL_SECONDS)
            try:
                await self.refresh()
                failing = False
            except CortexError as exc:
                if not failing:
                    log.warning("settings: could not read changes made elsewhere: %s", exc)
                failing = True
