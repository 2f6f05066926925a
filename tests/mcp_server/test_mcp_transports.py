"""``ecocompute mcp`` as a subprocess: a real client over stdio, and another over streamable HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from factories import run_async
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp_clients import check_conversation, conversation


def _talk(target: Any) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        with anyio.fail_after(60):
            async with Client(target) as client:
                return await conversation(client)

    return run_async(go)


def test_stdio() -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "ecocompute", "mcp"], env=dict(os.environ))
    errors = check_conversation(_talk(params))
    assert not errors, "\n".join(errors)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ecocompute", "mcp", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "server exited"
            time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_streamable_http(http_server: str) -> None:
    errors = check_conversation(_talk(http_server))
    assert not errors, "\n".join(errors)


def test_bad_http_address_is_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ecocompute", "mcp", "--http", "localhost"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "HOST:PORT" in done.stderr and "Traceback" not in done.stderr
