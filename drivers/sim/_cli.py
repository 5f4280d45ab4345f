"""``boardd simulate``: write the event log of a simulated game."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from boardd.core.errors import DriverError
from boardd.core.eventlog import write_events
from boardd.core.events import ClockSide
from drivers.sim._core import PROFILES, SimulationError, simulate_game
from drivers.sim._driver import load_pgn_game
from drivers.sim._games import random_game
from drivers.sim._inject import Injection, InjectionKind
from drivers.sim._procedures import Correction, CorrectionKind

__all__ = ["configure_parser", "run"]

_LOGGER = logging.getLogger(__name__)


def _injection(text: str) -> Injection:
    try:
        return Injection.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _correction(text: str) -> Correction:
    try:
        return Correction.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Add the ``simulate`` options to *parser*."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--pgn", type=Path, metavar="FILE", help="play a game of this PGN file")
    source.add_argument("--random", action="store_true", help="play a seeded random legal game")
    parser.add_argument("--game", type=int, default=1, metavar="N", help="game number in the PGN file (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the handling and of the random game (default 0)")
    parser.add_argument("--chess960", action="store_true", help="with --random: a Chess960 start position")
    parser.add_argument("--plies", type=int, default=80, help="with --random: maximum length (default 80)")
    parser.add_argument("--profile", choices=PROFILES, default="clean", help="handling profile (default clean)")
    parser.add_argument("--inject", type=_injection, action="append", default=[], metavar="KIND@PLY",
                        help="inject an irregularity (repeatable); kinds: "
                             + ", ".join(k.value for k in InjectionKind))
    parser.add_argument("--correct", type=_correction, action="append", default=[], metavar="KIND@PLY",
                        help="the arbiter's correction cycle of an illegal move at that ply (repeatable); kinds: "
                             + ", ".join(k.value for k in CorrectionKind))
    parser.add_argument("--procedures", action="store_true",
                        help="the Laws' whole repertoire: every Chess960 castling method, one-hand captures")
    parser.add_argument("--no-clock", action="store_true",
                        help="a board without a clock: no reading, no press, each move completed by the reply "
                             "(the log's rules say clock_expected false); only the injections of the hands alone")
    parser.add_argument("--moved-twice", type=int, metavar="PLY",
                        help="with --no-clock: the player of this ply moves again before the reply; the arbiter "
                             "reinstates (OUT_OF_TURN_CHANGE)")
    parser.add_argument("--time-control", metavar="TC", help="PGN TimeControl of the clock (default: the game's)")
    parser.add_argument("--edition", type=int, choices=(2009, 2014, 2018, 2023), default=2023,
                        help="edition of the Laws for the game (default 2023)")
    parser.add_argument("--white-clock-side", choices=[s.value for s in ClockSide], default="left",
                        help="side of the clock White's time is on (default left)")
    parser.add_argument("--think", type=float, metavar="SECONDS", help="median think time (default: from the control)")
    parser.add_argument("-o", "--output", type=Path, metavar="FILE", help="event log to write (default stdout)")


@contextlib.contextmanager
def _output(path: Path | None) -> Iterator[TextIO]:
    if path is None:
        yield sys.stdout
        return
    with path.open("w", encoding="utf-8") as stream:
        yield stream


def run(args: argparse.Namespace) -> int:
    """Simulate and write the log; 0 on success, 2 on bad input."""
    try:
        game = (random_game(args.seed, max_plies=args.plies, chess960=args.chess960) if args.random
                else load_pgn_game(args.pgn, args.game))
        sim = simulate_game(game, seed=args.seed, profile=args.profile, injections=args.inject,
                            time_control=args.time_control, edition=args.edition,
                            white_clock_side=ClockSide(args.white_clock_side), think_median=args.think,
                            corrections=args.correct, procedures=args.procedures, clock=not args.no_clock,
                            moved_twice=args.moved_twice)
        with _output(args.output) as stream:
            count = write_events(stream, sim.events, sim.header)
    except BrokenPipeError:  # `boardd simulate ... | head`: the reader has seen enough
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - silences the final flush
        return 0
    except (SimulationError, DriverError, OSError) as exc:
        print(f"boardd simulate: {exc}", file=sys.stderr)
        return 2
    _LOGGER.info("wrote %d events, %d plies, expected codes %s", count, len(sim.moves), sim.codes)
    return 0
