"""Sweep of the Chess960 castling audit (tests/core/chess960_audit.py) over all 960 start arrays.

    .venv/bin/python scripts/chess960_audit.py [--per-array N] [--seed S] [--show K]
    .venv/bin/python scripts/chess960_audit.py --table     # procedure x outcome, one case per array (~2 min)

Prints the failing procedures per geometry category and per procedure, and the first K failures.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.core import chess960_audit as audit
from tests.core.chess960_audit import (
    cases,
    illegal_cases,
    later_cases,
    run,
    run_castling_found_later,
    run_found_later,
    run_illegal,
    run_incomplete,
    run_king_released,
)


def table(seed: int) -> int:
    """Procedure x outcome over all 960 arrays: the cases where the procedure applies, right, wrong (by the first
    problem of each wrong case)."""
    bad_total = 0

    def tally(name: str, results: list[tuple[str, str, list[str]]]) -> None:
        nonlocal bad_total
        done = [r for r in results if r[0] not in ("unreachable", "not constructible",
                                                   "no illegal move leaving the castling")
                and not r[0].startswith("n/a")]
        bad = [r for r in done if r[2]]
        bad_total += len(bad)
        kinds = Counter(r[2][0][:60] for r in bad)
        print(f"{name:38s} {len(done):4d} cases {len(done) - len(bad):4d} right {len(bad):4d} wrong  "
              f"{dict(kinds.most_common(3))}", flush=True)

    arrays = list(range(960))
    for proc in (*audit.KING_ROOK, *audit.STAYS, *audit.KING_TAKES_ROOK):
        results = [audit.run(c) for c in audit.cases(seed, 960, arrays=arrays, procedures=(proc,))]
        tally("legal " + proc, [r for r in results if r[1].split("/")[0] == proc])  # (not the fallbacks)
    tally("pressed before it is finished", [audit.run_incomplete(c)
                                            for c in audit.later_cases(seed, 960, "incomplete")])
    tally("illegal castling (+ correction)", [audit.run_illegal(c) for c in audit.illegal_cases(seed, 960)])
    tally("king released, rook never moved", [audit.run_king_released(c)
                                              for c in audit.later_cases(seed, 960, "king-released")])
    tally("illegal move found later across a castling", [audit.run_found_later(c)
                                                         for c in audit.later_cases(seed, 960, "found-later")])
    tally("illegal castling found later", [audit.run_castling_found_later(c)
                                           for c in audit.later_cases(seed, 960, "castling-found-later")])
    return 1 if bad_total else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-array", type=int, default=1)
    ap.add_argument("--seed", type=int, default=960)
    ap.add_argument("--show", type=int, default=10)
    ap.add_argument("--arrays", type=int, default=960, help="the first N arrays (0..N-1)")
    ap.add_argument("--illegal", type=int, default=0, help="N illegal castlings (with corrections) instead")
    ap.add_argument("--king-released", type=int, default=0, help="N kings released, rook unmoved")
    ap.add_argument("--found-later", type=int, default=0, help="N illegal moves found later across a castling")
    ap.add_argument("--castling-found-later", type=int, default=0, help="N illegal castlings found later")
    ap.add_argument("--incomplete", type=int, default=0, help="N castlings pressed before they are finished")
    ap.add_argument("--table", action="store_true",
                    help="every procedure over the 960 arrays (one random case per array): right / wrong")
    ap.add_argument("--procedure", action="append", default=[],
                    help="only this procedure (repeatable; e.g. king_on_rook), one case per array")
    args = ap.parse_args()
    if args.table:
        return table(args.seed)
    todo = cases(args.seed, args.arrays * args.per_array, arrays=list(range(args.arrays)),
                 **({"procedures": tuple(args.procedure)} if args.procedure else {}))  # type: ignore[arg-type]
    runner = run
    if args.illegal:
        todo = illegal_cases(args.seed, args.illegal)  # type: ignore[assignment]
        runner = run_illegal  # type: ignore[assignment]
    if args.king_released:
        todo = later_cases(args.seed, args.king_released, "king-released")  # type: ignore[assignment]
        runner = run_king_released  # type: ignore[assignment]
    if args.castling_found_later:
        todo = later_cases(args.seed, args.castling_found_later, "castling-found-later")  # type: ignore[assignment]
        runner = run_castling_found_later  # type: ignore[assignment]
    if args.incomplete:
        todo = later_cases(args.seed, args.incomplete, "incomplete")  # type: ignore[assignment]
        runner = run_incomplete  # type: ignore[assignment]
    if args.found_later:
        todo = later_cases(args.seed, args.found_later, "found-later")  # type: ignore[assignment]
        runner = run_found_later  # type: ignore[assignment]
    total: Counter[str] = Counter()
    bad: Counter[str] = Counter()
    by_proc: Counter[str] = Counter()
    bad_proc: Counter[str] = Counter()
    shown = 0
    t0 = time.monotonic()
    for case in todo:
        cat, proc, problems = runner(case)  # type: ignore[arg-type]
        total[cat] += 1
        by_proc[proc.split("/")[0]] += 1
        if problems:
            bad[cat] += 1
            bad_proc[proc.split("/")[0]] += 1
            if shown < args.show:
                shown += 1
                print(case, proc, problems)
    print(f"{len(todo)} cases in {time.monotonic() - t0:.1f} s")
    for cat in sorted(total):
        print(f"  {cat:40s} {bad[cat]:4d} failing / {total[cat]}")
    for proc in sorted(by_proc):
        print(f"  {proc:40s} {bad_proc[proc]:4d} failing / {by_proc[proc]}")
    print(f"failing: {sum(bad.values())} / {len(todo)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
