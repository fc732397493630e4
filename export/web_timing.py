"""How fast the static web build starts on a phone: its cold download and the time to the first trick's card.

    python -m export.web_timing SITE [--json]

serves ``SITE`` (a folder written by ``hearts export --web``) with Python's ``http.server`` and opens
it in headless Chromium (Playwright, the system's chromium) as a phone on 4G: Chromium's network
throttling at 9 Mbit/s down, 60 ms latency, and its CPU throttling 4× slower, a fresh profile (nothing
cached). It starts the default table (Play on the start screen: three ``normal`` opponents in the
shipped build), passes three cards, and measures:

* ``bytes``: every byte the page fetched, as sent by ``http.server`` (no compression), from the
  address typed to the first card of the first trick on the table;
* ``setup_s``: from the address to the start screen;
* ``first_card_s``: from the pass to the first card of the first trick on the table (the opponents'
  models loaded and their first decisions made; ``?fast=1``, so the page adds no pause of its own).

Checks: at most ``--max-bytes`` (default 3 MB) and ``--max-seconds`` (default 5) for the first card;
exit code 1 when either is missed.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import shutil
import sys
import threading
import time
from pathlib import Path

#: The phone: Chromium's throttling (bytes per second, milliseconds) and CPU slowdown.
DOWNLOAD = 9_000_000 / 8
UPLOAD = 1_000_000 / 8
LATENCY_MS = 60
CPU_SLOWDOWN = 4


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serving(site: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def measure(site: Path, chromium: str) -> dict:
    """The figures of one cold start (see the module docstring)."""
    from playwright.sync_api import sync_playwright  # the test extra

    with serving(site) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
            page = context.new_page()
            cdp = context.new_cdp_session(page)
            cdp.send("Network.enable")
            cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
            cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": LATENCY_MS,
                                                          "downloadThroughput": DOWNLOAD, "uploadThroughput": UPLOAD})
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
            received = {"bytes": 0, "files": 0}

            def finished(event):
                received["bytes"] += int(event.get("encodedDataLength", 0))
                received["files"] += 1

            cdp.on("Network.loadingFinished", finished)
            began = time.perf_counter()
            page.goto(url + "?fast=1")
            page.wait_for_selector("body[data-state=setup]", timeout=120_000)
            setup_s = time.perf_counter() - began
            page.click("#start")
            page.wait_for_selector("body[data-state=your-turn]", timeout=120_000)
            for card in page.eval_on_selector_all("#hand button.card", "bs => bs.map(b => b.dataset.card)")[:3]:
                page.click(f'#hand button[data-card="{card}"] .corner', force=True)
            passed = time.perf_counter()
            page.click("#pass-confirm")
            page.wait_for_selector("#trick .card", timeout=120_000)
            first_card_s = time.perf_counter() - passed
        finally:
            browser.close()
    return {"bytes": received["bytes"], "files": received["files"], "setup_s": round(setup_s, 2),
            "first_card_s": round(first_card_s, 2), "download_bytes_per_s": DOWNLOAD, "latency_ms": LATENCY_MS,
            "cpu_slowdown": CPU_SLOWDOWN}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m export.web_timing", description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="a folder written by hearts export --web")
    parser.add_argument("--max-bytes", type=int, default=3_000_000, help="the most bytes allowed (default %(default)s)")
    parser.add_argument("--max-seconds", type=float, default=5.0,
                        help="the most seconds from the pass to the first trick's card (default %(default)g)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file() or not (args.site / "config.json").is_file():
        parser.error(f"{args.site} is not a web build (index.html and config.json): hearts export --web DIR writes one")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        parser.error("chromium is not installed (scripts/setup_clients.sh installs it)")
    figures = measure(args.site, chromium)
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        print(f"{figures['bytes'] / 1e6:.2f} MB in {figures['files']} files; start screen after {figures['setup_s']:.1f} s; "
              f"first trick's card {figures['first_card_s']:.1f} s after the pass (9 Mbit/s, 60 ms, CPU 4x slower)")
    failed = [f"{figures['bytes']:,} bytes, over {args.max_bytes:,}"] if figures["bytes"] > args.max_bytes else []
    if figures["first_card_s"] > args.max_seconds:
        failed.append(f"the first card after {figures['first_card_s']} s, over {args.max_seconds:g} s")
    for line in failed:
        print(f"too slow: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
