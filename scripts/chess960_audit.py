"""Sweep of the Chess960 castling audit (tests/core/chess960_audit.py) over all 960 start arrays.

    .venv/bin/python scripts/chess960_audit.py [--per-array N] [--seed S] [--show K]
    .venv/bin/python scripts/chess960_audit.py --table     # geometry x procedure x outcome, every part (~5 min)

Prints the failing procedures per geometry category and per procedure, and the first K failures.
"""

from __future__ import annotations

import argparse
import dataclasses
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

#: problems that are an alert raised where none is due (or a second alert for one incident), not a wrong result
FALSE_ALERT = ("findings", "info", "rook first", "before the correction", "duplicate", "raised")
SKIPPED = ("unreachable", "not constructible", "no illegal move leaving the castling")
GEOMETRIES = ("king and rook move", "king moves one square", "rook passes the king", "king and rook swap",
              "king only (rook on its final square)", "rook only (king on its final square)")


#: the geometries' column heads
SHORT = {"king and rook move": "K+R move", "king moves one square": "K one square", "rook passes the king":
         "R passes K", "king and rook swap": "K/R swap", "king only (rook on its final square)": "K only",
         "rook only (king on its final square)": "R only", "a legal move (not a castling)": "a legal move"}


def verdict(problems: list[str]) -> str:
    if not problems:
        return "right"
    return "false alert" if problems[0].startswith(FALSE_ALERT) else "wrong"


def flicker_results(seed: int, count: int) -> list[tuple[str, str, list[str]]]:
    """Legal castlings by every procedure with a flicker on a square that takes no part (before the first hand
    movement or after the last), one random case per start array."""
    todo = [dataclasses.replace(c, noise="flicker") for c in audit.cases(
        seed + 1, count, arrays=list(range(960)), procedures=(*audit.KING_ROOK, *audit.STAYS, *audit.KING_TAKES_ROOK))]
    return [audit.run(c) for c in todo]


def table(seed: int, *, wrong_count: int = 960) -> int:
    """Geometry x procedure, per part of the space: the cases where the procedure applies, and how many came out
    right / wrong (a wrong record, code, subtype, article, penalty or ruling) / with a false alert (an alert where
    none is due, or a second alert for one incident). One random case per start array for each procedure."""
    bad_total = 0

    def tally(name: str, results: list[tuple[str, str, list[str]]]) -> None:
        nonlocal bad_total
        done = [r for r in results if r[0] not in SKIPPED and not r[0].startswith("n/a")]
        cells: dict[tuple[str, str], Counter[str]] = {}
        for cat, label, problems in done:
            cells.setdefault((cat, label.split("/")[0]), Counter())[verdict(problems)] += 1
        procs = sorted({p for _, p in cells})
        cats = [c for c in GEOMETRIES if any(k[0] == c for k in cells)] + \
            sorted({c for c, _ in cells} - set(GEOMETRIES))
        counts = Counter(verdict(r[2]) for r in done)
        bad_total += counts["wrong"] + counts["false alert"]
        print(f"\n{name}: {len(done)} cases, {counts['right']} right, {counts['wrong']} wrong, "
              f"{counts['false alert']} false alert   (cell: cases right/wrong/false alert)")
        print(f"  {'procedure':34s}" + "".join(f" {SHORT.get(c, c[:16]):>16s}" for c in cats))
        for p in procs:
            row = []
            for cat in cats:
                c = cells.get((cat, p))
                row.append(f"{sum(c.values())} {c['right']}/{c['wrong']}/{c['false alert']}" if c else "-")
            print(f"  {p[:34]:34s}" + "".join(f" {x:>16s}" for x in row))
        kinds = Counter(r[2][0][:70] for r in done if r[2])
        if kinds:
            print(f"  first problems: {dict(kinds.most_common(4))}")
        sys.stdout.flush()

    arrays = list(range(960))
    legal: list[tuple[str, str, list[str]]] = []
    for proc in (*audit.KING_ROOK, *audit.STAYS, *audit.KING_TAKES_ROOK):
        results = [audit.run(c) for c in audit.cases(seed, 960, arrays=arrays, procedures=(proc,))]
        legal += [r for r in results if r[1].split("/")[0] == proc]  # (not the fallbacks)
    tally("legal castling, by procedure (noise: slides, wrong square, place before lift; press or no clock)", legal)
    tally("legal castling with a sensor flicker (a square out of the castling, reverted within T_flicker, 0.3 s "
          "clear of other changes)", flicker_results(seed, 960))
    tally("pressed before it is finished", [audit.run_incomplete(c)
                                            for c in audit.later_cases(seed, 960, "incomplete")])
    tally("illegal castling (+ correction)", [audit.run_illegal(c) for c in audit.illegal_cases(seed, 960)])
    tally("castling completed wrong: king or rook on a wrong square (+ correction), E2009-E2023",
          [audit.run_wrong(c) for c in audit.wrong_cases(seed, wrong_count)])
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
    ap.add_argument("--flicker", type=int, default=0, help="N legal castlings with a sensor flicker")
    ap.add_argument("--wrong", type=int, default=0, help="N castlings completed with king or rook on a wrong square")
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
    if args.flicker:
        results = flicker_results(args.seed, args.flicker)
        bad = [r for r in results if r[2]]
        print(f"flicker: {len(results)} cases, {len(bad)} with problems: "
              f"{dict(Counter(r[2][0][:60] for r in bad).most_common(4))}")
        return 1 if bad else 0
    if args.wrong:
        todo = audit.wrong_cases(args.seed, args.wrong)  # type: ignore[assignment]
        runner = audit.run_wrong  # type: ignore[assignment]
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
