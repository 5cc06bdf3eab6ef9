"""The live web view under load: referee-to-browser delay and the arena's extra CPU.

A round robin runs 16 games at once (bots that think 20 ms a move) with
``arena run --web``, watched by 10 chromium pages (Playwright, Debian's
``/usr/bin/chromium``). Each page records, for every board update it draws, the
time since the referee applied that move (both clocks are this machine's),
taken when the page draws it (in its animation frame, see live.js). The
same tournament is also run without ``--web`` at all, and the arena's CPU time
(its own process and its worker processes, not the bots) is compared:

    delay: median and p99 over every move drawn (target: p99 < 100 ms)
    extra CPU: (arena CPU with 10 pages - without the web view) / wall time
               (target: < 10 % of one core)

    python bench/web.py [--pages 10 | --pages 1,10] [--think 0.02] [--games-per-pairing 8]
                        [--variant single|standard|long|marathon]

The default is a stress test: single rounds of 20 ms moves start about sixteen
bot processes a second and make some 600 moves a second. ``--variant standard
--think 0.1`` is closer to a real 5+0.1 tournament (matches, bots at the
built-in ladder's pace).

Chromium's own CPU is printed for every run, beside a baseline measured in the
same run: as many empty pages of the same size changing one number 30 times a
second (on this 2-core machine, with software rendering, ten such pages took
110 % of one core in session 4): past a few pages the delay is set by the
browser's share of the machine, not by the arena, whose side is the plain HTTP
client's figure.

Figures are noisy on a shared machine: the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

BOT = """
import os, random, sys, time
from arena.sdk import run
rng = random.Random(int(sys.argv[1]))
think, gate = float(sys.argv[2]), sys.argv[3]
def choose(request):
    while not os.path.exists(gate):  # every page is open before the first move
        time.sleep(0.05)
    time.sleep(think)
    return rng.choice(request.legal)
run(choose, name="thinker")
"""

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


def tournament(folder: Path, think: float, games: int, variant: str = "single") -> Path:
    bot = folder / "thinker.py"
    bot.write_text(BOT)
    gate = folder / "gate"
    bots = "".join(
        f'[[bots]]\nname = "t{i}"\n'
        f'command = ["{sys.executable}", "{bot}", "{i}", "{think}", "{gate}"]\n'
        for i in range(6)
    )
    toml = folder / "web.toml"
    toml.write_text(
        f'name = "webbench"\nvariant = "{variant}"\ntc = "120+1"\ngames_per_pairing = {games}\n'
        f"concurrency = 16\nseed = 2\n[openings]\nplies = 2\n{bots}"
    )
    return toml


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` and of its children named arena.workers."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    pids = [pid]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                if ppid == pid and b"arena.workers" in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except (OSError, ValueError):
                continue
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


class CpuWatch(threading.Thread):
    """Samples the arena's CPU until it exits; keeps the largest total seen per pid
    set (a process's counters vanish with it, so the last sample is the figure)."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.last = 0.0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.last = max(self.last, cpu_seconds(self.pid))
            time.sleep(0.2)


def run_arena(toml: Path, results: Path, web: bool, pages: int) -> dict[str, object]:
    gate = toml.with_name("gate")
    gate.unlink(missing_ok=True)
    if not web:
        gate.touch()
    args = [sys.executable, "-m", "arena.cli", "run", str(toml), "--results", str(results),
            "-q", "--no-report"]  # fmt: skip
    if web:
        args += ["--web", "127.0.0.1:0"]
    start = time.monotonic()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    watch = CpuWatch(process.pid)
    watch.start()
    delays: list[float] = []
    server_delays: list[float] = []
    chromium = 0.0
    errors: list[str] = []
    if web:
        assert process.stderr is not None
        url = next(line for line in process.stderr if line.startswith("web view: ")).split()[-1]
        from playwright.sync_api import sync_playwright

        client = sse_client(url, results.with_name("client-delays.txt"))
        with sync_playwright() as p:
            browser, opened = open_pages(p, pages)
            for page in opened:
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: errors.append(str(e)))
            for page in opened:  # polled by timer: no requestAnimationFrame loop of ours
                page.goto(url)
                page.wait_for_function("window.arenaLive.snapshots >= 1", polling=100)
            gate.touch()
            start = time.monotonic()  # the moves start now
            chromium_before = chromium_cpu()
            opened[0].wait_for_function(
                "document.getElementById('progress-line').dataset.state === 'finished'",
                polling=250,
                timeout=600_000,
            )
            chromium = (chromium_cpu() - chromium_before) / (time.monotonic() - start)
            for page in opened:
                delays += page.evaluate("window.arenaLive.delays")
            browser.close()
        client.wait(60)
        text = results.with_name("client-delays.txt").read_text()
        server_delays = [float(x) for x in text.split()]
    process.wait()
    wall = time.monotonic() - start
    watch.stop.set()
    watch.join()
    return {"wall": wall, "cpu": watch.last, "delays": delays, "server": server_delays,
            "chromium": chromium, "errors": errors}  # fmt: skip


def open_pages(playwright: Any, pages: int) -> tuple[Any, list[Any]]:
    """Debian's chromium and ``pages`` pages of it at 1,400 x 900 CSS pixels."""
    browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
    return browser, [browser.new_page(viewport={"width": 1400, "height": 900})
                     for _ in range(pages)]  # fmt: skip


def chromium_pids() -> list[int]:
    """Chromium's processes started by this one (browser, renderers, GPU...):
    descendants of this process, not another session's."""
    parent: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            pid = int(entry.name)
            names[pid] = stat[stat.index("(") + 1 : stat.rindex(")")]
            parent[pid] = int(stat.rsplit(")", 1)[1].split()[1])
    mine, changed = {os.getpid()}, True
    while changed:
        grown = mine | {pid for pid, ppid in parent.items() if ppid in mine}
        changed, mine = grown != mine, grown
    return [pid for pid in mine if "chrom" in names.get(pid, "")]


def chromium_cpu() -> float:
    """CPU seconds of every chromium process of this bench alive now."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in chromium_pids():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


FLOOR_PAGE = """<!doctype html><p id="n">0</p><script>
let k = 0, last = 0;
function tick(t) {
  if (t - last >= 32) { last = t; document.getElementById("n").textContent = ++k; }
  requestAnimationFrame(tick);
}
requestAnimationFrame(tick);
</script>"""


def chromium_floor(pages: int, seconds: float = 10.0) -> tuple[float, float]:
    """The baseline: chromium's CPU (share of one core) for ``pages`` pages of the
    same size that change one number about 30 times a second and do nothing else,
    and the updates a second each page managed. What any live page costs here
    before it draws a single board."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, opened = open_pages(p, pages)
        for page in opened:
            page.set_content(FLOOR_PAGE)
        time.sleep(1)
        before, start = chromium_cpu(), time.monotonic()
        counts = [page.evaluate("k") for page in opened]
        time.sleep(seconds)
        counts = [page.evaluate("k") - c for page, c in zip(opened, counts, strict=True)]
        wall = time.monotonic() - start
        share = (chromium_cpu() - before) / wall
        browser.close()
    return share, sum(counts) / pages / wall


CLIENT = """
import json, sys, time
import httpx
event, out = "", open(sys.argv[2], "w")
with httpx.stream("GET", sys.argv[1], timeout=600) as response:
    for line in response.iter_lines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event == "game":
            data = json.loads(line[6:])
            if data["ply"]:
                out.write(f"{time.time() - data['t']}\\n")
        elif line.startswith("data: ") and event == "end":
            break
"""


def sse_client(url: str, results: Path) -> subprocess.Popen[bytes]:
    """One plain HTTP client on the event stream, in its own process: the delay
    without a browser's rendering (on a loaded machine chromium's CPU dominates)."""
    stream = url.replace("/live", "/live/events")
    return subprocess.Popen([sys.executable, "-c", CLIENT, stream, str(results)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pages", default="10", help="Pages watching; a list (1,10) runs once per count."
    )
    parser.add_argument("--think", type=float, default=0.02, help="Seconds per bot move.")
    parser.add_argument("--games-per-pairing", type=int, default=8)
    parser.add_argument("--variant", default="single", help="Match kind of every game.")
    args = parser.parse_args()
    counts = [int(x) for x in args.pages.split(",")]
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-web-"))
    toml = tournament(folder, args.think, args.games_per_pairing, args.variant)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (noisy figures)")
    plain = run_arena(toml, folder / "plain", web=False, pages=0)
    print(f"arena CPU without web: {plain['cpu']:.2f} s in {plain['wall']:.1f} s wall")
    for pages in counts:
        watched = run_arena(toml, folder / f"web{pages}", web=True, pages=pages)
        report(pages, plain, watched)
    for pages in counts:
        share, rate = chromium_floor(pages)
        print(f"baseline: {pages} empty pages changing one number {rate:.0f} times a second: "
              f"chromium {100 * share:.0f} % of one core")  # fmt: skip
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def report(pages: int, plain: dict[str, object], watched: dict[str, object]) -> None:
    delays = sorted(1000 * d for d in watched["delays"])  # type: ignore[attr-defined]
    if not delays:
        sys.exit("no move reached a page")
    p99 = delays[min(len(delays) - 1, int(0.99 * len(delays)))]
    print(f"{pages} pages: moves drawn: {len(delays)} ({len(delays) // pages} per page)")
    print(f"  referee-to-browser delay: median {statistics.median(delays):.1f} ms, "
          f"p99 {p99:.1f} ms, max {delays[-1]:.1f} ms (target p99 < 100 ms)")  # fmt: skip
    server = sorted(1000 * d for d in watched["server"])  # type: ignore[attr-defined]
    if server:
        print(f"  same, to a plain HTTP client: {len(server)} moves, median "
              f"{statistics.median(server):.1f} ms, p99 "
              f"{server[min(len(server) - 1, int(0.99 * len(server)))]:.1f} ms")  # fmt: skip
    print(f"  arena CPU: {watched['cpu']:.2f} s in {watched['wall']:.1f} s wall; "
          f"chromium {100 * watched['chromium']:.0f} % of one core")  # type: ignore[operator]  # fmt: skip
    errors = watched["errors"]
    print(f"  console errors: {len(errors)}" + (f", the first: {errors[0]}" if errors else ""))  # type: ignore[arg-type,index]
    extra = (watched["cpu"] - plain["cpu"]) / watched["wall"]  # type: ignore[operator]
    print(f"  extra arena CPU with {pages} pages: {100 * extra:.1f} % of one core (target < 10 %)")


if __name__ == "__main__":
    main()
