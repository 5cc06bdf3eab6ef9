"""The live web view under load: referee-to-browser delay and the arena's extra CPU.

A round robin runs 16 games at once (bots that think 20 ms a move) with
``arena run --web``, watched by 10 chromium pages (Debian's
``/usr/bin/chromium``, driven by Playwright). Each page records, for every board
update it draws, the time since the referee applied that move (both clocks are
this machine's), taken when the page draws it (in its animation frame, see
live.js). The same tournament is also run without ``--web`` at all, and the
arena's CPU time (its own process and its worker processes, not the bots) is
compared:

    delay: median and p99 over every move drawn (target: p99 < 100 ms)
    extra CPU: (arena CPU with 10 pages - without the web view) / wall time
               (target: < 10 % of one core)

    python bench/web.py [--pages 10 | --pages 1,10] [--tabs] [--think 0.02]
                        [--games-per-pairing 8] [--variant single|standard|long|marathon]
                        [--floor-seconds 10]

Two ways of opening the pages, modelling two different users:

- default, *separate visible pages*: the stress case, ten people (or ten
  monitors) each watching the page. Every page is a Playwright page in its own
  window, 1,400 x 900 CSS pixels, and Playwright keeps every page it drives
  "active" (focus emulation: visible, focused, drawing at 60 frames a second),
  so ten pages render all the time. The delay is over every move drawn on every
  page.
- ``--tabs``: one person with the live view open in N tabs of one window, who
  sees one of them. Chromium is started here (headless, a window of 1,400 x
  900 whose viewport, printed, is smaller by the browser's own bars; without
  Playwright's flags that switch background throttling off) and Playwright
  attaches to it over CDP without its default overrides (no focus emulation);
  the first tab is the window's own, the others are made with
  ``Target.createTarget`` and ``background: true``, so chromium itself hides
  them: ``document.visibilityState`` is "hidden" and requestAnimationFrame does
  not run there (checked and printed before the run). Every tab loads the live
  page at the start; the page keeps its event stream open only while visible
  (a browser gives a server six HTTP/1.1 connections, see live.js), so a hidden
  tab holds none and draws nothing. The delay is the foreground tab's. Halfway
  through the run each tab is brought to the front in turn
  (``Page.bringToFront``, what clicking a tab does) and timed until it has drawn
  every running game at its latest ply (the snapshot of the stream it opens on
  being shown), and that frame's rendering is done: the "switch" delay a user
  feels. Then the first tab is back in front (the moves it drew on coming back
  are left out of its delay). To know the latest ply, each tab here parses
  every event a second time (a bench listener; its CPU time is printed).

The default game load is a stress test: single rounds of 20 ms moves start
about sixteen bot processes a second and make some 600 moves a second.
``--variant standard --think 0.1`` is closer to a real 5+0.1 tournament
(matches, bots at the built-in ladder's pace).

Chromium's own CPU is printed for every run, beside a baseline measured in the
same run: as many empty pages of the same size (opened the same way, so with
``--tabs`` one visible and the rest hidden) changing one number 30 times a
second (on this 2-core machine, with software rendering, ten such visible
pages took 110 % of one core in session 4): past a few visible pages the delay
is set by the browser's share of the machine, not by the arena, whose side is
the plain HTTP client's figure.

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
from collections.abc import Iterator
from contextlib import contextmanager
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

# The tests' chromium harness: the same browser, flags and tabs of one window.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from browser import ARGS as CHROMIUM_ARGS  # noqa: E402
from browser import CHROMIUM, tabs_of_one_window  # noqa: E402

WINDOW = {"width": 1400, "height": 900}


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
    """utime + stime of ``pid`` and of its children named arena.backends.workers."""
    pids = [pid]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                if ppid == pid and b"arena.backends.workers" in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except (OSError, ValueError):
                continue
    return processes_cpu(pids)


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


FINISHED = "() => document.getElementById('progress-line').dataset.state === 'finished'"
HALFWAY = (
    "() => { const d = document.getElementById('progress-line').dataset;"
    " return +d.total > 0 && 2 * +d.done >= +d.total; }"
)


def run_arena(
    toml: Path, results: Path, web: bool, pages: int, tabs: bool = False
) -> dict[str, Any]:
    gate = toml.with_name("gate")
    gate.unlink(missing_ok=True)
    if not web:
        gate.touch()
    args = [
        sys.executable,
        "-m",
        "arena.cli",
        "run",
        str(toml),
        "--results",
        str(results),
        "-q",
        "--no-report",
    ]
    if web:
        args += ["--web", "127.0.0.1:0"]
    start = time.monotonic()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    watch = CpuWatch(process.pid)
    watch.start()
    out: dict[str, Any] = {"delays": [], "server": [], "chromium": 0.0, "tabs": tabs}
    if web:
        assert process.stderr is not None
        url = next(line for line in process.stderr if line.startswith("web view: ")).split()[-1]
        from playwright.sync_api import sync_playwright

        client = sse_client(url, results.with_name("client-delays.txt"))
        with sync_playwright() as p, open_pages(p, pages, tabs) as opened:
            if tabs:
                opened[0].context.add_init_script(TAB_SCRIPT)
            errors: list[str] = []
            for page in opened:
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: errors.append(str(e)))
            for page in opened:  # polled by timer: no requestAnimationFrame loop of ours
                page.goto(url)
                if page.evaluate("!document.hidden"):  # a hidden page opens no stream
                    page.wait_for_function("() => window.arenaLive.snapshots >= 1", polling=100)
            if tabs:
                out["facts"] = tab_facts(opened)
            gate.touch()
            start = time.monotonic()  # the moves start now
            chromium_before = chromium_cpu()
            front = opened[0]
            if tabs and pages > 1:
                front.wait_for_function(HALFWAY, polling=250, timeout=600_000)
                out["switches"] = switch_tabs(opened)
            front.wait_for_function(FINISHED, polling=250, timeout=600_000)
            out["chromium"] = (chromium_cpu() - chromium_before) / (time.monotonic() - start)
            if tabs:
                drawn = front.evaluate(FOREGROUND_DELAYS)
                out["delays"], out["left_out"] = drawn["delays"], drawn["left_out"]
                out["listener_ms"] = [page.evaluate("window.__bench.parseMs") for page in opened]
            else:
                for page in opened:
                    out["delays"] += page.evaluate("window.arenaLive.delays")
            out["errors"] = errors
        client.wait(60)
        text = results.with_name("client-delays.txt").read_text()
        out["server"] = [float(x) for x in text.split()]
    process.wait()
    out["wall"] = time.monotonic() - start
    watch.stop.set()
    watch.join()
    out["cpu"] = watch.last
    assert process.stderr is not None
    check_games(results, process.returncode, process.stderr.read())
    return out


def check_games(results: Path, status: int, stderr: str) -> None:
    """Stop unless the run ended well and every game ended without a fault: an arena
    whose bots cannot start plays nothing, and its figures would time that."""
    from arena.match.record import FAULT_REASONS
    from arena.storage.store import Store

    if status != 0:
        sys.exit(f"web bench: arena run exited with {status}: {stderr[-2000:]}")
    with Store.open_existing(results / "webbench") as store:
        records = list(store.records())
    faults = [r for r in records if r.reason in FAULT_REASONS]
    if not records or faults:
        first = f", the first: {faults[0].reason}: {faults[0].detail}" if faults else ""
        sys.exit(f"web bench: {len(faults)} of {len(records)} games ended by a fault{first}")


@contextmanager
def open_pages(playwright: Any, pages: int, tabs: bool = False) -> Iterator[list[Any]]:
    """``pages`` pages of Debian's chromium at 1,400 x 900: each a Playwright page
    (kept active by Playwright: visible, focused, drawing), or with ``tabs`` the
    tabs of one window of a chromium started here, the first in front and the
    others created in the background (hidden, as a browser hides them)."""
    if not tabs:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield [browser.new_page(viewport=WINDOW) for _ in range(pages)]
        finally:
            browser.close()
        return
    with tabs_of_one_window(playwright, pages, **WINDOW) as opened:
        yield opened


TAB_SCRIPT = """(() => {
  // The bench's listener in each tab: what its event streams brought (the latest
  // ply of each running game, null once gone) and each visibility change. Shown,
  // a tab has caught up in the first animation frame in which every game is
  // drawn at the ply it then had (or later, or gone): the ply received before it
  // was shown if its stream stayed open, else the ply in the snapshot of the
  // stream it opens on being shown.
  const b = window.__bench = {live: new Map(), events: 0, snapshots: 0, parseMs: 0,
                              changes: [], sources: [], target: null};
  const Real = window.EventSource;
  window.EventSource = class extends Real {
    constructor(...args) {
      super(...args);
      b.sources.push(this);
      const timed = f => ev => {
        const t = performance.now(); f(JSON.parse(ev.data)); b.parseMs += performance.now() - t;
      };
      this.addEventListener("snapshot", timed(s => {  // runs before the page's own listener
        b.live.clear(); for (const g of s.games) b.live.set(g.key, g.ply);
        b.snapshots++;
        const c = b.changes.at(-1);
        if (c && c.state === "visible" && b.target === null) {
          c.snapshot = Date.now(); b.target = new Map(b.live); c.behind = behind(b.target);
        }
      }));
      this.addEventListener("game", timed(g => { b.live.set(g.key, g.ply); b.events++; }));
      this.addEventListener("gone", timed(g => b.live.set(g.key, null)));
    }
  };
  function shown() {
    const m = new Map();
    for (const c of document.querySelectorAll("#boards .card")) {
      m.set(c.dataset.key, +c.dataset.ply);
    }
    return m;
  }
  function behind(target) {
    const m = shown();
    let n = 0;
    for (const [k, ply] of target) {
      if (ply === null ? m.has(k) : (m.has(k) ? m.get(k) < ply : b.live.get(k) !== null)) n++;
    }
    return n;
  }
  b.behind = () => behind(b.live);
  document.addEventListener("visibilitychange", () => {  // runs before the page's own
    const c = {state: document.visibilityState, at: Date.now(),
               moves: window.arenaLive.delays.length, drawnBefore: window.arenaLive.moves};
    b.changes.push(c);
    b.target = null;
    if (c.state !== "visible") return;
    c.open = b.sources.some(s => s.readyState !== 2);  // 2: CLOSED
    if (c.open) { b.target = new Map(b.live); c.behind = behind(b.target); }
    const check = () => {
      if (b.target !== null && behind(b.target) === 0) {
        c.frame = Date.now(); c.movesAfter = window.arenaLive.delays.length;
        const channel = new MessageChannel();  // runs once this frame's rendering is done
        channel.port1.onmessage = () => { c.drawn = Date.now(); channel.port1.close(); };
        channel.port2.postMessage(0);
      } else if (Date.now() - c.at > 30000) c.timeout = true;
      else requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
  });
})();"""

SWITCHED = """() => { const c = window.__bench.changes.at(-1);
  return !!c && c.state === "visible" && (c.drawn !== undefined || c.timeout === true); }"""

FOREGROUND_DELAYS = """() => {
  // the foreground tab's delays, less the moves it drew on coming back from hidden
  const d = window.arenaLive.delays, cut = [];
  let from = null;
  for (const c of window.__bench.changes) {
    if (c.state === "hidden") from = c.moves;
    else if (from !== null) { cut.push([from, c.movesAfter ?? d.length]); from = null; }
  }
  if (from !== null) cut.push([from, d.length]);
  const kept = d.filter((_, i) => !cut.some(([a, b]) => i >= a && i < b));
  return {delays: kept, left_out: d.length - kept.length};
}"""

PROBE_START = """() => {
  const p = window.__probe = {frames: 0, stop: false, t0: performance.now()};
  const f = () => { if (p.stop) return; p.frames++; requestAnimationFrame(f); };
  requestAnimationFrame(f);
}"""

PROBE_READ = """() => {
  const p = window.__probe; p.stop = true;
  return {state: document.visibilityState, hidden: document.hidden, focus: document.hasFocus(),
          frames: p.frames, ms: performance.now() - p.t0, width: innerWidth, height: innerHeight,
          snapshots: window.arenaLive.snapshots};
}"""


def tab_facts(opened: list[Any]) -> dict[str, Any]:
    """What the tabs really are, before the run: which window each page target is
    in, each tab's visibility and focus, and how many animation frames each ran
    while the foreground tab ran 30."""
    session = opened[0].context.browser.new_browser_cdp_session()
    targets = [t for t in session.send("Target.getTargets")["targetInfos"] if t["type"] == "page"]
    windows = {
        session.send("Browser.getWindowForTarget", {"targetId": t["targetId"]})["windowId"]
        for t in targets
    }
    session.detach()
    for page in opened:
        page.evaluate(PROBE_START)
    opened[0].wait_for_function("() => window.__probe.frames >= 30", polling=20, timeout=30_000)
    probes = [page.evaluate(PROBE_READ) for page in opened]
    return {
        "targets": len(targets),
        "windows": len(windows),
        "probes": probes,
        "renderers": len(chromium_pids(renderers=True)),
    }


def switch_tabs(opened: list[Any]) -> list[dict[str, Any]]:
    """Bring each background tab to the front in turn, then the first tab back;
    for each, what it had received and drawn while hidden, and the time from the
    ``Page.bringToFront`` request to its visibility change, to the animation
    frame in which every game is drawn at its latest ply, and to the end of that
    frame's rendering work."""
    out = []
    for index in [*range(1, len(opened)), 0]:
        page = opened[index]
        seen = page.evaluate(
            "() => ({events: window.__bench.events, drawn: window.arenaLive.moves,"
            " snapshots: window.__bench.snapshots, state: document.visibilityState})"
        )
        sent = time.time() * 1000
        page.bring_to_front()
        page.wait_for_function(SWITCHED, polling=20, timeout=60_000)
        change = page.evaluate("window.__bench.changes.at(-1)")
        if change.get("timeout"):
            sys.exit(f"tab {index} did not catch up within 30 s of being shown: {change}")
        snapshot = change.get("snapshot")
        out.append(
            {
                "tab": index,
                **seen,
                "behind": change["behind"],
                "open": change["open"],
                "drawn_hidden": change["drawnBefore"] - seen["drawn"],
                "visible": change["at"] - sent,
                "frame": change["frame"] - sent,
                "snapshot": None if snapshot is None else snapshot - sent,
                "done": change["drawn"] - sent,
            }
        )
    return out


def chromium_pids(renderers: bool = False) -> list[int]:
    """Chromium's processes started by this one (browser, renderers, GPU...), or
    only its renderers: descendants of this process, not another session's."""
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
    pids = [pid for pid in mine if "chrom" in names.get(pid, "")]
    if renderers:
        pids = [pid for pid in pids if b"--type=renderer" in _cmdline(pid)]
    return pids


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def chromium_cpu() -> float:
    """CPU seconds of every chromium process of this bench alive now."""
    return processes_cpu(chromium_pids())


def processes_cpu(pids: list[int]) -> float:
    """utime + stime of the processes ``pids`` still alive, in seconds."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
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


def chromium_floor(
    pages: int, tabs: bool = False, seconds: float = 10.0
) -> tuple[float, float, int]:
    """The baseline: chromium's CPU (share of one core) for ``pages`` pages of the
    same size, opened the same way, that change one number about 30 times a
    second and do nothing else, the updates a second each visible page managed,
    and how many were visible. What any live page costs here before it draws a
    single board."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p, open_pages(p, pages, tabs) as opened:
        for page in opened:
            page.set_content(FLOOR_PAGE)
        shown = [page for page in opened if page.evaluate("document.visibilityState") == "visible"]
        time.sleep(1)
        before, start = chromium_cpu(), time.monotonic()
        counts = [page.evaluate("k") for page in shown]
        time.sleep(seconds)
        counts = [page.evaluate("k") - c for page, c in zip(shown, counts, strict=True)]
        wall = time.monotonic() - start
        share = (chromium_cpu() - before) / wall
    return share, sum(counts) / max(1, len(counts)) / wall, len(shown)


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
    parser.add_argument(
        "--tabs",
        action="store_true",
        help="The pages are tabs of one window: the first in front, the others hidden.",
    )
    parser.add_argument("--think", type=float, default=0.02, help="Seconds per bot move.")
    parser.add_argument("--games-per-pairing", type=int, default=8)
    parser.add_argument("--variant", default="single", help="Match kind of every game.")
    parser.add_argument(
        "--floor-seconds", type=float, default=10.0, help="Seconds the empty-page baseline runs."
    )
    args = parser.parse_args()
    counts = [int(x) for x in args.pages.split(",")]
    with tempfile.TemporaryDirectory(prefix="arena-bench-web-") as tmp:
        folder = Path(tmp)
        os.chmod(folder, 0o755)  # a root arena's bots run as nobody: their folder must be readable
        measure(args, counts, folder)


def measure(args: argparse.Namespace, counts: list[int], folder: Path) -> None:
    toml = tournament(folder, args.think, args.games_per_pairing, args.variant)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (noisy figures)")
    print(
        "pages: "
        + (
            "tabs of one window, the first in front, the others in the background"
            if args.tabs
            else "separate pages, each visible and active"
        )
    )
    plain = run_arena(toml, folder / "plain", web=False, pages=0)
    print(f"arena CPU without web: {plain['cpu']:.2f} s in {plain['wall']:.1f} s wall")
    for pages in counts:
        watched = run_arena(toml, folder / f"web{pages}", web=True, pages=pages, tabs=args.tabs)
        report(pages, plain, watched)
    for pages in counts:
        share, rate, shown = chromium_floor(pages, args.tabs, args.floor_seconds)
        what = f"{pages} empty pages" if not args.tabs else f"{pages} empty tabs ({shown} visible)"
        print(
            f"baseline: {what} changing one number {rate:.0f} times a second: "
            f"chromium {100 * share:.0f} % of one core"
        )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def percentile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


def report(pages: int, plain: dict[str, Any], watched: dict[str, Any]) -> None:
    delays = sorted(1000 * d for d in watched["delays"])
    if not delays:
        sys.exit("no move reached a page")
    if watched["tabs"]:
        report_tabs(pages, watched)
        print(
            f"  foreground tab: moves drawn: {len(delays)} "
            f"({watched['left_out']} drawn on coming back to the front left out)"
        )
    else:
        print(f"{pages} pages: moves drawn: {len(delays)} ({len(delays) // pages} per page)")
    print(
        f"  referee-to-browser delay: median {statistics.median(delays):.1f} ms, "
        f"p99 {percentile(delays, 0.99):.1f} ms, max {delays[-1]:.1f} ms "
        f"(target p99 < 100 ms)"
    )
    server = sorted(1000 * d for d in watched["server"])
    if server:
        print(
            f"  same, to a plain HTTP client: {len(server)} moves, median "
            f"{statistics.median(server):.1f} ms, p99 {percentile(server, 0.99):.1f} ms"
        )
    print(
        f"  arena CPU: {watched['cpu']:.2f} s in {watched['wall']:.1f} s wall; "
        f"chromium {100 * watched['chromium']:.0f} % of one core"
    )
    errors = watched["errors"]
    print(f"  console errors: {len(errors)}" + (f", the first: {errors[0]}" if errors else ""))
    extra = (watched["cpu"] - plain["cpu"]) / watched["wall"]
    what = "tabs" if watched["tabs"] else "pages"
    print(f"  extra arena CPU with {pages} {what}: {100 * extra:.1f} % of one core (target < 10 %)")


def report_tabs(pages: int, watched: dict[str, Any]) -> None:
    facts = watched["facts"]
    print(
        f"{pages} tabs: {facts['targets']} page targets in {facts['windows']} window(s), "
        f"{facts['renderers']} renderer process(es)"
    )
    for i, probe in enumerate(facts["probes"]):
        print(
            f"  tab {i} before the run: visibilityState {probe['state']}, hidden "
            f"{str(probe['hidden']).lower()}, hasFocus {str(probe['focus']).lower()}, "
            f"{probe['frames']} animation frames in {probe['ms']:.0f} ms, viewport "
            f"{probe['width']}x{probe['height']}, snapshots received "
            f"{probe['snapshots']}"
        )
    switches = watched.get("switches", [])
    for s in switches:
        got = (
            ""
            if s["snapshot"] is None
            else f"its new stream's snapshot at {s['snapshot']:.0f} ms, "
        )
        print(
            f"  tab {s['tab']} brought to the front halfway ({s['state']} until then: "
            f"{s['events']} game events and {s['snapshots']} snapshots received, {s['drawn']} "
            f"moves drawn, {s['drawn_hidden']} of them while hidden; stream open when shown: "
            f"{str(s['open']).lower()}; {s['behind']} games behind): visible after "
            f"{s['visible']:.0f} ms, {got}every game at its latest ply in the frame at "
            f"{s['frame']:.0f} ms, rendered at {s['done']:.0f} ms"
        )
    if switches:
        done = sorted(s["done"] for s in switches)
        own = sorted(s["done"] - s["visible"] for s in switches)
        print(
            f"  switch-tab delay over {len(done)} switches, bringToFront to the frame showing "
            f"every game at its latest ply, rendered: median {statistics.median(done):.0f} ms, "
            f"max {done[-1]:.0f} ms; of which from the visibility change on: median "
            f"{statistics.median(own):.0f} ms, max {own[-1]:.0f} ms"
        )
    listener = watched["listener_ms"]
    print(
        f"  the bench's own listener (a second JSON.parse of every event): "
        f"{sum(listener) / len(listener):.0f} ms of CPU per tab over the run"
    )


if __name__ == "__main__":
    main()
