"""The `local` extra on a machine that cannot reach the model hub: doctor answers within its
timeout in one line that says what to do and writes nothing, a model folder copied by hand
(CORTEX_EMBEDDING_MODEL_PATH) loads without the hub, and a running server says "failed" once
loading has failed for good, having created its folders 0700.

The hub is a port on 127.0.0.1 (HF_ENDPOINT): one that accepts and never answers, or one that
refuses. The model folder is a tiny static (model2vec) model built here: a word-level
tokenizer.json and a safetensors file of 8-dimensional rows, which fastembed loads as it loads
minishlab/potion-base-8M. These tests need fastembed (`pip install -e ".[local]"`); .ci/run
installs it after the main run and runs this file with CORTEX_TEST_LOCAL_EXTRA=required.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import numpy as np
import pytest
from mcp import Client

from cortex_mcp.config import load_settings
from cortex_mcp.runtime import build_embedding_cascade, open_cortex
from cortex_mcp.transports.mcp import build_server
from tests.conftest import TEST_KNOBS
from tests.helpers.stdio_helpers import server_command

if TEST_KNOBS.get("CORTEX_TEST_LOCAL_EXTRA") != "required":
    pytest.importorskip("fastembed", reason="the `local` extra is not installed")

STATIC_MODEL = "minishlab/potion-base-8M"  # a model fastembed loads from a safetensors file
# doctor embeds "cortex-mcp health check" and "ok": a model that knows none of a text's words
# gives it a zero vector, which the cascade refuses
WORDS = ["[UNK]", "cortex", "mcp", "health", "check", "ok", "nightly", "backup", "job", "runs"]


@pytest.fixture
def silent_hub() -> Iterator[str]:
    """A model hub that accepts connections and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def refusing_hub() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def tiny_model(folder: Path) -> Path:
    """A static embedding model: tokenizer.json and model.safetensors (8 dimensions)."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    folder.mkdir()
    tokenizer = Tokenizer(WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()  # type: ignore[assignment]
    tokenizer.save(str(folder / "tokenizer.json"))
    rows = np.random.default_rng(7).standard_normal((len(WORDS), 8)).astype("<f4")
    header = json.dumps(
        {
            "embeddings": {
                "dtype": "F32",
                "shape": list(rows.shape),
                "data_offsets": [0, rows.nbytes],
            }
        }
    ).encode()
    header += b" " * (-len(header) % 8)
    (folder / "model.safetensors").write_bytes(
        struct.pack("<Q", len(header)) + header + rows.tobytes()
    )
    return folder


def doctor(home: Path, hub: str, **env: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """`cortex-mcp doctor` as a new user runs it: a home of its own, the defaults, `local`."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "HF_"))}
    clean.update(HOME=str(home), HF_ENDPOINT=hub, CORTEX_EMBEDDING_PROVIDER="local", **env)
    started = time.monotonic()
    done = subprocess.run(
        [*server_command(), "doctor"], capture_output=True, text=True, timeout=120, env=clean
    )
    return done, time.monotonic() - started


def embeddings_line(stdout: str) -> str:
    (line,) = [ln for ln in stdout.splitlines() if ln.startswith("embeddings ")]
    return line


def test_doctor_without_the_model_hub_answers_within_its_timeout_in_one_line_and_writes_nothing(
    tmp_path: Path, silent_hub: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done, took = doctor(home, silent_hub, CORTEX_EMBEDDING_TIMEOUT_S="2")
    assert done.returncode == 1, done.stdout + done.stderr
    line = embeddings_line(done.stdout)
    assert line.startswith("embeddings  failed    local ")
    # the cause, and both ways out, in the one line
    assert "no network to the model hub (127.0.0.1:" in line
    assert "no answer within 2 s" in line
    assert "CORTEX_EMBEDDING_MODEL_PATH" in line and "CORTEX_EMBEDDING_BASE_URL" in line
    assert line.endswith("(timeout 2 s)")
    # the timeout it names is the time it took (plus Python's start), not retries after 3, 9, 27 s
    assert took < 2 + 8, took
    assert "ERROR" not in done.stderr and "retries" not in done.stderr
    assert "no network" not in done.stderr  # said once, on stdout
    # doctor changes nothing: no ~/.cortex, no ~/.cortex/models, no download cache
    assert sorted(p.name for p in home.iterdir()) == []


def test_a_model_folder_copied_by_hand_loads_without_the_hub(
    tmp_path: Path, refusing_hub: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    folder = tiny_model(tmp_path / "potion")
    done, _ = doctor(
        home,
        refusing_hub,
        CORTEX_EMBEDDING_MODEL=STATIC_MODEL,
        CORTEX_EMBEDDING_MODEL_PATH=str(folder),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert embeddings_line(done.stdout).startswith(
        f"embeddings  ok        local local:{STATIC_MODEL}: 8 dimensions in "
    )
    assert not (home / ".cortex").exists()


@pytest.mark.anyio
async def test_a_model_path_that_holds_no_model_names_it_and_what_to_do(
    tmp_path: Path, refusing_hub: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", refusing_hub)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    for path, cause in (
        (tmp_path / "missing", "is not a folder"),
        (tmp_path, f"no copy of {STATIC_MODEL} in {tmp_path}"),
    ):
        settings = load_settings(
            db_path=tmp_path / "b.db",
            embedding_provider="local",
            embedding_model=STATIC_MODEL,
            embedding_model_path=path,
        )
        cascade, _ = build_embedding_cascade(settings, download=False)
        (probe,) = [await cascade.probe(provider) for provider in cascade.providers]
        await cascade.close()
        assert probe.status == "failed"
        assert cause in probe.detail and "CORTEX_EMBEDDING_MODEL_PATH" in probe.detail


@pytest.mark.anyio
async def test_recall_over_mcp_says_the_local_model_failed_once_loading_failed_for_good(
    tmp_path: Path, refusing_hub: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", refusing_hub)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    cortex = tmp_path / "home" / ".cortex"
    (tmp_path / "home").mkdir()
    settings = load_settings(
        db_path=cortex / "brain.db", models_dir=cortex / "models", embedding_provider="local"
    )
    server = build_server(lambda: open_cortex(settings), settings)
    async with Client(server, mode="legacy") as client:
        await client.call_tool("cortex_remember", {"content": "The nightly backup job runs"})
        degraded: list[str] = []
        with anyio.fail_after(30):  # a hang, not a speed: the refused hub fails at once
            while not any("failed" in note for note in degraded):
                recall = await client.call_tool("cortex_recall", {"query": "backup"})
                degraded = recall.structured_content["meta"]["degraded"]  # type: ignore[index]
                await anyio.sleep(0.05)
    (note,) = degraded
    assert "local: failed: no network to the model hub (127.0.0.1:" in note, note
    assert "not ready" not in note and "still loading" not in note
    # the folders the server made (the database's and the models') are its user's only
    for folder in (cortex, cortex / "models"):
        assert folder.stat().st_mode & 0o777 == 0o700, folder


@pytest.mark.anyio
async def test_once_the_local_model_failed_for_good_recall_says_what_to_do_in_one_line(
    tmp_path: Path, refusing_hub: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", refusing_hub)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    settings = load_settings(
        db_path=tmp_path / "brain.db", models_dir=tmp_path / "models", embedding_provider="local"
    )
    server = build_server(lambda: open_cortex(settings), settings)
    async with Client(server, mode="legacy") as client:
        await client.call_tool("cortex_remember", {"content": "The nightly backup job runs"})
        notes: list[str] = []
        with anyio.fail_after(30):  # a hang, not a speed: the refused hub fails at once
            while not any("failed" in note for note in notes):
                recall = await client.call_tool("cortex_recall", {"query": "backup"})
                notes = recall.structured_content["meta"]["degraded"]  # type: ignore[index]
                await anyio.sleep(0.05)
        for _ in range(2):  # and says so from then on, never "still loading" again
            again = await client.call_tool("cortex_recall", {"query": "backup"})
            assert again.structured_content["meta"]["degraded"] == notes  # type: ignore[index]
    (note,) = notes
    assert "\n" not in note and "still loading" not in note, note
    assert "local: failed: no network to the model hub (127.0.0.1:" in note, note
    assert "set CORTEX_EMBEDDING_MODEL_PATH to it" in note, note  # what to do about it
    assert "CORTEX_EMBEDDING_BASE_URL" in note, note
