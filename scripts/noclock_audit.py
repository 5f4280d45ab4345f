"""No-clock games with one illegal move (tests/core/noclock_audit.py): raised, moves lost, exact records, per kind.

    .venv/bin/python scripts/noclock_audit.py [--games N] [--seed S] [--show K]

Real games (/work/shared/data/pgn) played by hand without a clock, one illegal move injected at a random ply
(geometry, self-check, illegal castling, the wrong side moving), both players playing on. Prints per kind how many
games raised the finding, lost real moves (and how many), and kept an exact record; then the first K failures.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.core.noclock_audit import KINDS, cases, judge


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7070)
    parser.add_argument("--show", type=int, default=3)
    args = parser.parse_args()
    counts: Counter[tuple[str, str]] = Counter()
    failures = []
    for case in cases(args.seed, args.games):
        verdict = judge(case)
        if verdict is None:
            counts[(case.kind, "not constructible")] += 1
            continue
        counts[(case.kind, "games")] += 1
        counts[(case.kind, "raised")] += verdict.raised
        counts[(case.kind, "lost moves")] += verdict.lost > 0
        counts[(case.kind, "moves lost")] += verdict.lost
        counts[(case.kind, "exact")] += verdict.exact
        if verdict.problems:
            failures.append(verdict)
    for kind in KINDS:
        print(f"{kind:11} " + "  ".join(f"{what} {counts[(kind, what)]}" for what in
                                         ("games", "raised", "exact", "lost moves", "moves lost")))
    for verdict in failures[:args.show]:
        print(verdict.case, "; ".join(p[:300] for p in verdict.problems))
    return 0


if __name__ == "__main__":
    sys.exit(main())
