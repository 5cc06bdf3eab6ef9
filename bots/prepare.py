"""Builds the compiled search's cache before the first game of alphabeta or mcts.

Run by the arena outside the sandbox (``arena/plan/prepare.py``), with the
arena's own interpreter (``sys.executable``) and a scrubbed environment, for a
bot named ``builtin:alphabeta`` or ``builtin:mcts``: ``python bots/prepare.py``.
It loads every kernel the bots use, compiling those the cache lacks, and tells
the arena two things on its standard output:

* a line ``compiling`` as soon as numba starts compiling one (a cache miss),
  so that the arena says what it waits for only when it is worth waiting for;
* then, when the cache is the tree's own, it compiles the kernels ahead of
  time into one extension module beside it (:mod:`arena.bots.aot`), which
  bots load without numba; a failure there (no C compiler) is one line on
  stderr, and the bots keep the JIT cache;
* last, when the cache is the tree's own (``bots/__pycache__``, which the
  sandboxed bots read), one JSON line ``{"files": [...], "absent": [...]}``
  naming what the cache was built from and the cache itself, and, when the
  module could not be built for want of a compiler or headers, where those
  would appear. The arena fingerprints those files and does not start this
  script again while they are unchanged and the absent ones stay absent.
"""

from __future__ import annotations

import json
import os
import sys

from numba.core import event


class _SayCompiling(event.Listener):
    """Prints ``compiling`` once, when the first kernel starts compiling."""

    said = False

    def say(self) -> None:
        """Once per process: numba's compiling and the module's build say it alike."""
        if not self.said:
            self.said = True
            print("compiling", flush=True)

    def on_start(self, ev: event.Event) -> None:
        self.say()

    def on_end(self, ev: event.Event) -> None:
        pass


def main() -> None:
    listener = _SayCompiling()
    event.register("numba:compile", listener)
    from arena.bots import aot, jit_cache
    from arena.bots.compiled_search import warm_up

    warm_up()
    files = jit_cache.built_from()
    if files is None:
        return
    module = aot.module_path(jit_cache.IN_TREE)
    absent: list[str] = []
    if not module.is_file() and (missing := aot.missing_tools()) is not None:
        print(f"prepare: no ahead-of-time kernels: {missing}", file=sys.stderr, flush=True)
        absent = [str(p) for p in aot.tool_paths() if not os.path.lexists(p)]
    elif not module.is_file():
        listener.say()
        try:
            aot.build(jit_cache.IN_TREE)
        except Exception as exc:  # a numba without pycc, a failing compiler: keep the JIT
            print(
                f"prepare: no ahead-of-time kernels ({type(exc).__name__}: {exc})",
                file=sys.stderr,
                flush=True,
            )
    files += [f for f in aot.sources() if f not in files]
    if module.is_file():
        files.append(module)
    print(json.dumps({"files": [str(f) for f in files], "absent": absent}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
