"""Shared pieces for the HTTP tests: an in-process app and a `cortex-mcp serve` subprocess."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
from starlette.testclient import TestClient

from cortex_mcp.config import Settings, load_settings
from cortex_mcp.runtime import open_cortex
from cortex_mcp.transports.http import create_app
from tests.helpers.stdio_helpers import HANG_S, server_command, server_env

TOKEN = "test-token-8c1f2e"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@contextlib.contextmanager
def rest_client(settings: Settings, clock: Any = None, **app_args: Any) -> Iterator[TestClient]:
    app = create_app(settings, lambda: open_cortex(settings, clock=clock), **app_args)
    with TestClient(app, base_url="http://127.0.0.1:21100", raise_server_exceptions=False) as c:
        yield c


@contextlib.contextmanager
def authed_rest_client(
    tmp_path: Path,
    clock: Any,
    db_name: str = "brain.db",
    database_url: str | None = None,
    **extra: Any,
) -> Iterator[TestClient]:
    """A REST client of a token-protected app over a fresh text-only database (PostgreSQL's
    with `database_url`), token sent."""
    settings = load_settings(
        db_path=tmp_path / db_name,
        embedding_provider="none",
        api_token=TOKEN,
        database_url=database_url,
        **extra,
    )
    with rest_client(settings, clock) as c:
        c.headers.update(AUTH)
        yield c


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServeProcess:
    """`cortex-mcp serve --transport all` on a free loopback port, as users start it."""

    def __init__(
        self,
        db_path: Path,
        *args: str,
        token: str | None = TOKEN,
        first_port: int | None = None,
        **env: str,
    ) -> None:
        """`first_port`: the port to try first (a test of a taken port), else a free one."""
        extra = {"CORTEX_API_TOKEN": token} if token else {}
        self._db_path, self._args, self._env = db_path, args, server_env(db_path, **extra, **env)
        self._start(first_port)

    def _start(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = self._db_path.parent / f"serve-{self.port}.log"
        self._log_file = self.log.open("wb")
        command = [*server_command(), "serve", "--transport", "all", "--port", str(self.port)]
        self.proc = subprocess.Popen(
            [*command, *self._args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._log_file,
            env=self._env,
        )

    def wait_ready(self, timeout: float = 2 * HANG_S) -> None:
        """Until this server says it listens and /health answers (the timeout bounds a hang).
        The free port can be taken by another process before the server binds it: then it
        exits and starts again on another one. Another server on that port is never taken
        for this one: only this server's own log says it bound the port."""
        deadline = time.monotonic() + timeout
        retries = 3
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = self.log.read_text()
                if not _port_was_taken(log) or retries == 0:
                    raise RuntimeError(f"serve exited early:\n{log}")
                retries -= 1
                self._log_file.close()
                self._start()
            with contextlib.suppress(httpx2.TransportError):
                listening = f"running on {self.url} " in self.log.read_text(errors="replace")
                if listening and httpx2.get(self.url + "/api/v1/health", timeout=1).is_success:
                    return
            time.sleep(0.1)
        raise TimeoutError(f"serve did not answer:\n{self.log.read_text()}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = HANG_S) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._log_file.close()
        return code

    def __enter__(self) -> ServeProcess:
        try:
            self.wait_ready()
        except BaseException:
            self.stop(signal.SIGKILL)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _port_was_taken(log: str) -> bool:
    """Our check before serving found it taken, or uvicorn's bind after it did."""
    return "cannot listen on" in log or "address already in use" in log.lower()


def env_without_cortex() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
