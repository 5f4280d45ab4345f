"""Run every benchmark in turn: ``python -m bench`` (``make bench``); figures go to stdout.

Each module also runs on its own (``python -m bench.bench_core --help`` and so on); see
docs/benchmarks.md for what each measures and the figures measured so far.
``python -m bench false-alarms [--games N]`` runs the false-alarm benchmark alone.
"""

from __future__ import annotations

import runpy
import sys

#: module, arguments: quick defaults, so that the whole run stays within about a quarter of an hour
BENCHES: list[tuple[str, list[str]]] = [
    ("bench.bench_core", ["--games", "60"]),
    ("bench.bench_drivers", []),
    ("bench.bench_sim_eventlog", []),
    ("bench.bench_consumers", ["--boards", "50", "--duration", "30"]),
    ("bench.bench_daemon", ["e2e", "resources"]),
    ("bench.bench_false_alarms", ["--games", "300"]),
]

#: ``python -m bench NAME [ARGS...]`` runs one benchmark with its own arguments (``false-alarms --games 100``).
ALIASES = {"false-alarms": "bench.bench_false_alarms", "alert-rings": "bench.bench_alert_rings",
           "downtime-block": "bench.bench_downtime_block", "downtime-audit": "bench.bench_downtime_audit"}


def main() -> int:
    """Run the benchmarks listed in :data:`BENCHES` (or those named on the command line)."""
    if len(sys.argv) > 1 and sys.argv[1] in ALIASES:
        module = ALIASES[sys.argv[1]]
        sys.argv = [module, *sys.argv[2:]]
        runpy.run_module(module, run_name="__main__")
        return 0
    wanted = set(sys.argv[1:])
    for module, args in BENCHES:
        if wanted and module.split(".")[-1] not in wanted:
            continue
        print(f"\n===== {module} {' '.join(args)}", flush=True)
        saved = sys.argv
        sys.argv = [module, *args]
        try:
            runpy.run_module(module, run_name="__main__")
        except SystemExit as exc:
            if exc.code not in (None, 0):
                print(f"{module} exited with {exc.code}", file=sys.stderr)
        finally:
            sys.argv = saved
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
