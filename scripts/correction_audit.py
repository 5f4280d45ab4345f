"""The simulator's illegal-castling and changed-promotion correction cycles through the engine, judged from the Laws
(tests/core/sim_correction_audit.py): cases right per kind, variant and edition.

    .venv/bin/python scripts/correction_audit.py [--show]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.core import sim_correction_audit as audit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print every wrong case with its problems")
    args = parser.parse_args()
    bad = 0
    print(f"{'kind':26s} {'variant':16s} " + " ".join(f"{e:>7d}" for e in audit.EDITIONS))
    for kind in audit.KINDS:
        variants = [("standard", False, False), ("960", True, False)]
        if kind is audit.CorrectionKind.CASTLING_ILLEGAL:
            variants.append(("other castling", False, True))
        for name, c960, other in variants:
            cells = []
            for edition in audit.EDITIONS:
                cases = audit.plies(kind, c960, 6, other)
                right = 0
                for seed, ply in cases:
                    label, problems = audit.audit(kind, seed, ply, edition, c960)
                    right += not problems
                    if problems and args.show:
                        print(f"  {kind.value} {name} {edition} game {seed} ply {ply}: {label}: {problems}")
                bad += len(cases) - right
                cells.append(f"{right}/{len(cases)}")
            print(f"{kind.value:26s} {name:16s} " + " ".join(f"{c:>7s}" for c in cells))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
