"""``ecocompute mcp``: run the MCP server over stdio (default) or streamable HTTP."""

from __future__ import annotations

from pathlib import Path

import typer

from ecocompute.schema.errors import UsageError

HELP = (
    "Serve the dataset and the estimator to AI assistants over MCP: stdio by default (what Claude Desktop and "
    "Cursor start), streamable HTTP with --http.\n\n"
    "Example: ecocompute mcp --http 127.0.0.1:8765"
)


def parse_host_port(value: str) -> tuple[str, int]:
    """``HOST:PORT`` -> (host, port); a UsageError saying the expected form otherwise."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--http {value!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    return host.strip("[]"), int(port)


def mcp_command(
    http: str | None = typer.Option(None, "--http", metavar="HOST:PORT", help="Serve streamable HTTP at /mcp."),
    dataset: Path | None = typer.Option(
        None, "--dataset", metavar="DIR", help="A folder built by `publish build` (default: the shipped data)."
    ),
) -> None:
    """Serve the dataset and the estimator to AI assistants over MCP."""
    from ecocompute.mcp_server.server import build_server
    from ecocompute.mcp_server.sources import Sources

    address = parse_host_port(http) if http is not None else None
    server = build_server(Sources.load(dataset))
    if address is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host=address[0], port=address[1])


def register(app: typer.Typer) -> None:
    """Add ``mcp`` to the ``ecocompute`` command."""
    app.command("mcp", help=HELP)(mcp_command)
