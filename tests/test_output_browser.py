"""What a bot wrote, in the web view's replays, in a real browser (``arena serve``):
a start fault's replay shows the first and last lines of the bot's output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from browser import overflow, page_at
from test_output import FLAKY
from test_web_browser import shot, start, stop


def test_a_start_faults_replay_shows_what_the_bot_wrote(browser, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o777)
    (tmp_path / "flaky.py").write_text(FLAKY)
    toml = tmp_path / "t.toml"
    toml.write_text(
        'name = "mid"\nvariant = "single"\ntc = "5+0.1"\ngames_per_pairing = 2\n'
        "concurrency = 1\nseed = 1\n"
        '[[bots]]\nname = "a"\ncommand = "builtin:random"\n'
        f'[[bots]]\nname = "flaky"\ncommand = ["{sys.executable}", "flaky.py", "{state}"]\n'
        f'sandbox_rw = ["{state}"]\n'
    )
    subprocess.run(
        [sys.executable, "-m", "arena.cli", "run", str(toml), "--results", "results", "-q"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=120,
    )
    process, url = start(["serve", "results", "--listen", "127.0.0.1:0"], tmp_path)
    try:
        for width in (1400, 420):
            with page_at(browser, width) as (page, errors):
                page.goto(url + "t/mid")
                row = page.locator("#games-paged tbody tr.game", has_text="start")
                row.locator("button.open").click()
                said = page.locator(".replay-row details.stderr")
                said.wait_for(timeout=20_000)
                assert said.get_attribute("open") is not None  # a fault: open
                text = said.locator("pre").inner_text()
                assert text.startswith("runtime line 1\n") and text.endswith("runtime line 100")
                assert "[... 60 earlier lines dropped]" in text
                assert said.locator("div").inner_text() == "flaky:"
                shot(page, tmp_path, f"start-fault-{width}.png")
                assert overflow(page)["wide"] == []
                assert errors == []
    finally:
        stop(process)
