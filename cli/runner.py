"""Running a typer app with the project's error handling: one red line and an exit code, never a traceback."""

from __future__ import annotations

import os
from collections.abc import Sequence

import typer

from ecocompute.console import err, fail_line
from ecocompute.schema.errors import EcocomputeError


def main_for(typer_app: typer.Typer, argv: Sequence[str] | None = None, prog_name: str = "ecocompute") -> int:
    """Run ``typer_app`` with the project's error handling and return its exit code."""
    try:
        result = typer_app(args=list(argv) if argv is not None else None, standalone_mode=False, prog_name=prog_name)
    except EcocomputeError as exc:
        fail_line(str(exc))
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        fail_line("aborted")
        return 130
    except typer.TyperException as exc:  # usage errors: typer prints them with the command's usage line
        exc.show()  # type: ignore[attr-defined]
        return int(getattr(exc, "exit_code", 2))
    except KeyboardInterrupt:
        fail_line("interrupted")
        return 130
    except Exception as exc:  # a bug of ours: still one line, and how to report it
        fail_line(f"internal error ({type(exc).__name__}: {exc}); please report it with the command you ran")
        err.print("set ECOCOMPUTE_DEBUG=1 to see the traceback", style="dim")
        if os.environ.get("ECOCOMPUTE_DEBUG"):
            raise
        return 3
    return result if isinstance(result, int) else 0
