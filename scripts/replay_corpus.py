"""Replay corpus: the byte-identical proof of a behaviour-preserving change.

``python scripts/replay_corpus.py record`` replays a fixed corpus through ``boardd replay``
(in process, the same code path as the command) and writes one SHA-256 per item of its
output to ``tests/replay_corpus.sha256``; ``python scripts/replay_corpus.py check`` replays
it again and lists every item whose output differs. A refactoring of the core (issue 9)
is proven behaviour-preserving by ``check`` passing on hashes recorded before it.

The corpus:

* every device capture in ``tests/drivers/captures/`` (``--driver dgt``), and the same
  captures with ``--pgn-only``;
* 40 real games of ``../shared/data/pgn`` (36 of Tata Steel 2022, the 4 Chess960 games), their
  first 80 plies, in every profile and with the injection kinds in turn;
* 200 seeded random games in every handling profile (clean, casual, clumsy), each with
  one injection kind (every kind in turn, and none), some in Chess960, all four editions,
  simulated by ``drivers.sim`` and replayed as event logs.

Each item's line holds two hashes: of its input (the event log the simulator wrote, so a
simulator change is told apart from an engine change) and of the replay output.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import chess  # noqa: E402
import chess.pgn  # noqa: E402

from boardd.core import eventlog  # noqa: E402
from drivers.sim import PROFILES, Injection, InjectionKind, SimulationError, applicable, random_game, simulate_game  # noqa: E402

HASHES = ROOT / "tests" / "replay_corpus.sha256"
CAPTURES = ROOT / "tests" / "drivers" / "captures"
SHARED_PGN = ROOT.parent / "shared" / "data" / "pgn"
GAMES_PER_PROFILE = 200
REAL_PLIES = 80
EDITIONS = (2009, 2014, 2018, 2023)
#: the rotation of the recorded items: frozen, so that a kind added to the simulator adds items (ADDED_KINDS)
#: instead of shifting every seed to another kind and renaming the corpus
KINDS: tuple[InjectionKind | None, ...] = (
    None, InjectionKind.ROOK_FIRST, InjectionKind.PAWN_NOT_REPLACED, InjectionKind.PRESS_NO_MOVE,
    InjectionKind.PRESS_PIECE_IN_HAND, InjectionKind.ILLEGAL_MOVE, InjectionKind.TWO_HANDS_CASTLING,
    InjectionKind.KNOCK_NOT_RESTORED, InjectionKind.LATE_PRESS, InjectionKind.TOUCH_MOVE)
#: kinds added later: each gets ADDED_GAMES seeds per profile after the rotation's
ADDED_KINDS: tuple[InjectionKind, ...] = tuple(k for k in InjectionKind if k not in KINDS)
ADDED_GAMES = 20


def _replay_main() -> object:
    from boardd.daemon import replay  # noqa: PLC0415 - imported where used, like the CLI does

    return replay


def _run_replay(path: Path, *, driver: str | None = None, pgn_only: bool = False) -> bytes:
    """The stdout bytes of ``boardd replay`` for *path*."""
    replay = _replay_main()
    args = SimpleNamespace(input=str(path), board=None, prefix="boardd", edition=None, time_control=None,
                           pgn_only=pgn_only, driver=driver)
    buffer = io.BytesIO()
    wrapper = io.TextIOWrapper(buffer, encoding="utf-8", write_through=True)
    old_out, old_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = wrapper, io.StringIO()
    try:
        status = replay.run(args)  # type: ignore[attr-defined]
    finally:
        wrapper.flush()
        sys.stdout, sys.stderr = old_out, old_err
    return f"exit {status}\n".encode() + buffer.getvalue()


def _injection_ply(kind: InjectionKind, game_moves: list[chess.Move], start: chess.Board, seed: int) -> int | None:
    """A ply where *kind* fits, starting from a seed-chosen ply and wrapping round."""
    board = start.copy()
    fits: list[int] = []
    for ply, move in enumerate(game_moves, 1):
        if applicable(kind, board, move, has_next=ply < len(game_moves)):
            fits.append(ply)
        board.push(move)
    if not fits:
        return None
    return fits[seed % len(fits)]


def _sim_items(tmp: Path) -> Iterator[tuple[str, Path]]:
    write_events = eventlog.write_events

    added = [(GAMES_PER_PROFILE + i * ADDED_GAMES + j, kind) for i, kind in enumerate(ADDED_KINDS)
             for j in range(ADDED_GAMES)]
    for profile in PROFILES:
        for seed, kind in itertools.chain(((seed, KINDS[seed % len(KINDS)]) for seed in range(GAMES_PER_PROFILE)),
                                          added):
            chess960 = seed % 10 == 9
            edition = EDITIONS[(seed // 3) % len(EDITIONS)]
            game = random_game(seed, max_plies=60, chess960=chess960)
            moves = list(game.mainline_moves())
            injections: list[Injection] = []
            if kind is not None:
                ply = _injection_ply(kind, moves, game.board(), seed)
                if ply is not None:
                    injections.append(Injection(kind, ply))
            at = injections[0].ply if injections else "-"
            name = f"sim/{profile}/{seed:03d}/{kind.value if kind else 'none'}@{at}"
            name += f"/e{edition}" + ("/960" if chess960 else "")
            path = tmp / "game.jsonl"
            try:
                sim = simulate_game(game, seed=seed, profile=profile, injections=injections, edition=edition)
            except SimulationError as exc:
                path.write_text(f"simulation error: {exc}\n", encoding="utf-8")
                yield name, path
                continue
            with path.open("w", encoding="utf-8") as stream:
                write_events(stream, sim.events, sim.header)
            yield name, path


def _real_games() -> list[chess.pgn.Game]:
    """Real games from shared/data: 36 of Tata Steel 2022 and the 4 Chess960 games (when shared/ is there)."""
    games: list[chess.pgn.Game] = []
    for name, count in (("tatamast22.pgn", 36), ("cutechess-fischerrandom.pgn", 4)):
        path = SHARED_PGN / name
        if not path.exists():
            continue
        with path.open(encoding="utf-8") as stream:
            while len(games) < 40 and count > 0 and (game := chess.pgn.read_game(stream)) is not None:
                games.append(game)
                count -= 1
    return games


def _real_items(tmp: Path) -> Iterator[tuple[str, Path]]:
    write_events = eventlog.write_events
    games = _real_games()
    for profile in PROFILES:
        for index, game in enumerate(games):
            kind = KINDS[(index + 1) % len(KINDS)]
            moves = list(game.mainline_moves())[:REAL_PLIES]
            injections: list[Injection] = []
            if kind is not None:
                ply = _injection_ply(kind, moves, game.board(), index)
                if ply is not None:
                    injections.append(Injection(kind, ply))
            at = injections[0].ply if injections else "-"
            name = f"real/{profile}/{index:02d}/{kind.value if kind else 'none'}@{at}"
            path = tmp / "game.jsonl"
            try:
                sim = simulate_game(game, seed=index, profile=profile, injections=injections, max_plies=REAL_PLIES)
            except SimulationError as exc:
                path.write_text(f"simulation error: {exc}\n", encoding="utf-8")
                yield name, path
                continue
            with path.open("w", encoding="utf-8") as stream:
                write_events(stream, sim.events, sim.header)
            yield name, path


def corpus(tmp: Path) -> Iterator[tuple[str, bytes, bytes]]:
    """(name, input bytes, replay output bytes) of every item."""
    for capture in sorted(CAPTURES.iterdir()):
        if capture.suffix not in (".bin", ".jsonl"):
            continue
        data = capture.read_bytes()
        yield f"capture/{capture.name}", data, _run_replay(capture, driver="dgt")
        yield f"capture/{capture.name}/pgn", data, _run_replay(capture, driver="dgt", pgn_only=True)
    for name, path in itertools.chain(_sim_items(tmp), _real_items(tmp)):
        data = path.read_bytes()
        if data.startswith(b"simulation error"):
            yield name, data, b""
            continue
        yield name, data, _run_replay(path)


def _lines(tmp: Path) -> Iterator[str]:
    for name, data, output in corpus(tmp):
        yield f"{hashlib.sha256(data).hexdigest()[:16]} {hashlib.sha256(output).hexdigest()} {name}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("record", "check"))
    parser.add_argument("--hashes", type=Path, default=HASHES)
    args = parser.parse_args(argv)
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        lines = list(_lines(Path(tmp)))
    if args.action == "record":
        args.hashes.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"recorded {len(lines)} items into {args.hashes}")
        return 0
    expected = args.hashes.read_text(encoding="utf-8").splitlines()
    want = {line.split(" ", 2)[2]: line for line in expected}
    got = {line.split(" ", 2)[2]: line for line in lines}
    differ = 0
    for name in sorted(want.keys() | got.keys()):
        a, b = want.get(name), got.get(name)
        if a == b:
            continue
        differ += 1
        if a is None or b is None:
            print(f"{'missing' if b is None else 'new'}: {name}")
        elif a.split()[0] != b.split()[0]:
            print(f"input changed (simulator): {name}")
        else:
            print(f"output differs: {name}")
    print(f"{len(got)} items, {len(got) - differ} identical, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
