"""The Ray backend without a cluster: ``arena run --backend ray`` starts a local
Ray instance of its own. (``tests/test_ray_backend.py`` joins a three-node
cluster for the whole module, so this runs apart from it.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import needs
from procs import wait_none_with

needs.module("ray", "install the 'ray' extra: pip install -e '.[ray]'", module_level=True)


def test_run_and_analysis_share_one_local_ray_instance(tmp_path: Path) -> None:
    """``arena run --backend ray --analyze`` with no cluster named: the analysis
    runs on the local instance the games ran on, rather than starting a second one
    (seconds each), and the instance is gone when the arena is. Ray makes a session
    folder under ``$RAY_TMPDIR/ray`` for each instance it starts."""
    toml = tmp_path / "t.toml"
    toml.write_text(
        """
name = "local-ray"
variant = "single"
tc = "10+0.1"
games_per_pairing = 2
seed = 3
[[bots]]
name = "random"
command = ["builtin:random"]
[[bots]]
name = "greedy"
command = ["builtin:greedy"]
"""
    )
    # Short: Ray's socket paths under it must fit in a Unix socket address.
    ray_tmp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_TMPDIR"] = str(ray_tmp)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "arena.cli", "run", str(toml), "--backend", "ray"]
            + ["--analyze", "--budget-ms", "5", "-q", "--no-report"]
            + ["--results", str(tmp_path / "results")],
            capture_output=True,
            text=True,
            timeout=180,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        lines = proc.stdout.splitlines()
        assert any(line.startswith("2 of 2 games stored in ") for line in lines), lines
        assert any(
            re.match(
                r"analysed 2 games \(0 already done\) in .* s on Ray \(\d+ CPUs? on 1 node\)", line
            )
            for line in lines
        ), lines
        sessions = sorted(p.name for p in (ray_tmp / "ray").glob("session_2*"))
        assert len(sessions) == 1, sessions
        wait_none_with(str(ray_tmp), limit=30)  # Ray's own processes ended with it
    finally:
        subprocess.run(["rm", "-rf", str(ray_tmp)], check=False)
