"""How fast and how small the dashboard is, in headless Chromium: today's data and 100x its rows.

    python benchmarks/site_speed.py [--dataset BUILD] [--scale 100] [--out benchmarks/results/site_speed]

For each dataset (a build of submissions/, and the same tables with every submission copied ``--scale`` times
under new ids, spread over ten synthetic card names and two batch sizes, J/token jittered by up to +-2%), it
writes the site, serves it over HTTP from this machine (as GitHub Pages would) and measures, in
/usr/bin/chromium with the contract's flags:

- ``interactive_ms``: navigation start to the first view drawn (``window.ecocomputeReadyMs``), median of 5 loads
  per view after one discarded warm-up load (the default gate tier; ``view=change&tier=all`` draws every
  accepted row);
- ``filter_ms``: one filter click until the redraw has painted (two animation frames), median of 5;
- ``transferred_bytes``: the bytes of every response the page fetched (uncompressed; ``gzip_bytes`` what a
  server compressing them would send).

Targets (issue 27): interactive <= 1000 ms and <= 2 MB with the whole dataset, <= 3000 ms at 100x.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ecocompute.publish.build import build
from ecocompute.publish.inputs import Source
from ecocompute.site.payload import SiteOptions
from ecocompute.site.render import write_site

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
VIEWS = ("view=change", "view=pareto", "view=cost", "view=table", "view=change&tier=all")  # URL hash states
RUNS = 5
TARGETS = {"interactive_ms": 1000, "transferred_bytes": 2_000_000, "interactive_ms_scaled": 3000}
CARDS = 10
SHARD = "train-00000-of-00001.parquet"


def scaled_dataset(source: Path, out: Path, scale: int) -> Path:
    """A copy of the build ``source`` whose tables hold every submission ``scale`` times under new ids."""
    shutil.copytree(source, out, ignore=shutil.ignore_patterns("site"))
    rng = np.random.default_rng(20261201)
    configs = [p.name for p in (source / "data").iterdir()]
    frames = {c: pl.read_parquet(source / "data" / c / SHARD) for c in configs}
    for config, frame in frames.items():
        copies = []
        for k in range(scale):
            copy = frame.with_columns((pl.col("submission_id") + f"-x{k:03d}").alias("submission_id"))
            if "gpu_name" in copy.columns:
                copy = copy.with_columns((pl.col("gpu_name") + f" #{k % CARDS}").alias("gpu_name"))
            if "batch_size" in copy.columns:
                copy = copy.with_columns(pl.lit(1 if (k // CARDS) % 2 == 0 else 8, pl.Int64).alias("batch_size"))
            for name in ("j_per_token_mean", "j_per_token"):
                if name in copy.columns:
                    jitter = rng.uniform(0.98, 1.02, copy.height)
                    copy = copy.with_columns((pl.col(name) * pl.Series(jitter)).alias(name))
            copies.append(copy)
        pl.concat(copies).write_parquet(out / "data" / config / SHARD)
    return out


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve ``folder`` on a free local port; return the server and its URL."""
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/index.html"


FILTER_JS = """async () => {
  const box = document.querySelector("fieldset[data-filter='precision'] input");
  const t0 = performance.now();
  box.click();
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const ms = performance.now() - t0;
  box.click();
  return ms;
}"""


def measure(browser: Any, url: str) -> dict[str, Any]:
    """Interactive time per view, filter latency and bytes transferred for the site at ``url``."""
    result: dict[str, Any] = {"interactive_ms": {}, "filter_ms": {}}
    warm = browser.new_page()  # one discarded load: the browser process's own warm-up is not the page's
    warm.goto(url)
    warm.wait_for_selector("body[data-ready]")
    warm.close()
    for view in VIEWS:
        loads, filters = [], []
        for _ in range(RUNS):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            sizes: list[tuple[int, int]] = []
            page.on("response", lambda r, sizes=sizes: sizes.append(_sizes(r)))
            page.goto(f"{url}#{view}")
            page.wait_for_selector("body[data-ready]")
            loads.append(page.evaluate("window.ecocomputeReadyMs"))
            filters.append(page.evaluate(FILTER_JS))
            result["transferred_bytes"] = sum(s[0] for s in sizes)
            result["gzip_bytes"] = sum(s[1] for s in sizes)
            context.close()
        result["interactive_ms"][view] = round(statistics.median(loads), 1)
        result["filter_ms"][view] = round(statistics.median(filters), 1)
    return result


def _sizes(response: Any) -> tuple[int, int]:
    body = response.body()
    return len(body), len(gzip.compress(body, 6))


def rows(folder: Path) -> dict[str, int]:
    """Rows of each table of a build."""
    return {p.name: pl.read_parquet(p / SHARD).height for p in sorted((folder / "data").iterdir())}


def main() -> None:
    """Measure today's data and ``--scale`` x its rows; write JSON and text results."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", type=Path, help="A build folder; default: build submissions/ now.")
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "site_speed")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dataset = args.dataset or build([Source.at(REPO / "submissions")], work / "dataset").out
        scaled = scaled_dataset(dataset, work / "scaled", args.scale)
        report: dict[str, Any] = {"targets": TARGETS, "scale": args.scale, "runs_per_view": RUNS}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            report["chromium"] = browser.version
            for name, folder, options in (
                ("today", dataset, SiteOptions()),
                (f"x{args.scale}", scaled, SiteOptions(n_boot=200)),
            ):
                started = time.perf_counter()
                site = write_site(folder, work / f"site-{name}", options)
                built_s = time.perf_counter() - started
                server, url = serve(site.out)
                try:
                    report[name] = {"rows": rows(folder), "site_bytes": site.bytes,
                                    "site_build_s": round(built_s, 2), **measure(browser, url)}  # fmt: skip
                finally:
                    server.shutdown()
            browser.close()
    today, big = report["today"], report[f"x{args.scale}"]
    report["passes"] = {
        "interactive_ms": max(today["interactive_ms"].values()) <= TARGETS["interactive_ms"],
        "transferred_bytes": today["transferred_bytes"] <= TARGETS["transferred_bytes"],
        "interactive_ms_scaled": max(big["interactive_ms"].values()) <= TARGETS["interactive_ms_scaled"],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    lines = [f"site speed, chromium {report['chromium']}, median of {RUNS} loads per view"]
    for name in ("today", f"x{args.scale}"):
        r = report[name]
        measured = r["rows"].get("measurements_all", r["rows"].get("measurements"))
        lines.append(
            f"{name}: {measured} measurement rows; interactive {r['interactive_ms']} ms; filter {r['filter_ms']} ms; "
            f"transferred {r['transferred_bytes'] / 1e6:.2f} MB ({r['gzip_bytes'] / 1e6:.2f} MB gzipped); "
            f"site build {r['site_build_s']} s"
        )
    lines.append(f"targets {TARGETS}: {report['passes']}")
    text = "\n".join(lines) + "\n"
    args.out.with_suffix(".txt").write_text(text, encoding="utf-8")
    print(text, end="")


if __name__ == "__main__":
    main()
