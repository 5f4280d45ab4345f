"""``python -m bench._daemon_trace run --config FILE``: ``boardd`` with a trace of GC pauses and late imports.

Used by ``bench.bench_daemon e2e --e2e-trace`` to find what the slowest presses had in common (the
first-game tail of issue 12): every garbage collection (wall time at its start, duration, generation,
objects collected) through ``gc.callbacks``, and every module import and ``compile()`` through an
audit hook (``sys.addaudithook``: the ``import`` event fires only when a module is actually loaded,
not for one already in ``sys.modules``). The trace is written as JSON to ``$BOARDD_BENCH_TRACE`` when
the daemon exits. The daemon itself is unchanged: this module calls ``boardd.cli.main``.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import sys
import time
from typing import Any

_EVENTS: list[tuple[str, float, float, str]] = []  # kind, wall start, duration s, detail
_gc_start: list[float] = []


def _on_gc(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _gc_start[:] = [time.time(), time.perf_counter()]
    elif _gc_start:
        wall, t0 = _gc_start
        _EVENTS.append(("gc", wall, time.perf_counter() - t0,
                        f"gen {info.get('generation')} collected {info.get('collected')}"))


def _on_audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "import":
        _EVENTS.append(("import", time.time(), 0.0, str(args[0])))
    elif event == "compile":
        _EVENTS.append(("compile", time.time(), 0.0, str(args[1])[:80]))


def _dump() -> None:
    path = os.environ.get("BOARDD_BENCH_TRACE")
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"events": _EVENTS, "gc_threshold": gc.get_threshold(), "gc_frozen": gc.get_freeze_count()},
                      fh)


def main() -> int:
    """Install the hooks and run ``boardd`` with the same arguments."""
    gc.callbacks.append(_on_gc)
    sys.addaudithook(_on_audit)
    atexit.register(_dump)
    from boardd.cli import main as boardd_main  # after the hooks: its imports are seen

    return boardd_main()


if __name__ == "__main__":
    raise SystemExit(main())
