"""The engine's modes are state machines with tables (boardd.core.engine.modes), like h11's connection states.

* the tables print, one line per transition, and every state can be reached from the initial one;
* the engine changes a mode only through ``Machine.fire`` (a static check of the engine's sources);
* every transition the engine takes in a sample of games (simulated games of every profile and injection kind,
  plus scripted set-up, reinstatement, game end, result, board and clock outages) is a row of its table, and
  the sample takes every trigger of every table at least once;
* the engine raises only codes of the code table (the laws shim that tolerated unknown codes is gone).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest

from boardd.core.engine import Engine, modes
from boardd.core.engine.modes import (
    BOARD_LINK,
    CLOCK_LINK,
    PHASES,
    LinkState,
    LinkTrigger,
    Machine,
    ModeError,
    Phase,
    PhaseTrigger,
    Transition,
    format_table,
)
from boardd.core.events import BoardSnapshot, Link, LinkChanged, Reinstate, Resolve, SetResult
from boardd.core.laws.codes import code_info
from boardd.core.outputs import IrregularityRaised, Output
from drivers.sim import PROFILES, Injection, InjectionKind, applicable, random_game, simulate_game
from tests.core.test_engine_clock import _clocked_opening, _dump, _outage_game, _play
from tests.core.test_scenarios import SCENARIOS, run
from tests.sim.test_sim_engine import run_engine

ENGINE_DIR = Path(__file__).resolve().parents[2] / "boardd" / "core" / "engine"
TABLES: dict[str, tuple[Transition, ...]] = {  # type: ignore[type-arg]
    "phase": PHASES, "board link": BOARD_LINK, "clock link": CLOCK_LINK}
INITIAL = {"phase": Phase.PLAY, "board link": LinkState.UP, "clock link": LinkState.UP}
Taken = tuple[str, str, str, str]


def test_the_tables_print_one_line_per_transition(capsys: pytest.CaptureFixture[str]) -> None:
    for name, table in TABLES.items():
        text = format_table(name, table)
        print(text)
        lines = text.splitlines()
        assert lines[0] == f"{name}:"
        assert len(lines) == len(table) + 1
        for row, line in zip(table, lines[1:], strict=True):
            assert re.match(rf"\s+{row.source.name}\s+--{row.trigger.name}\s*--> {row.target.name}\b", line), line
    out = capsys.readouterr().out
    assert "AWAIT_RESTORE  --RESTORED" in out and "DOWN           --DEVICE_REPORTS" in out


@pytest.mark.parametrize("name", list(TABLES))
def test_every_state_is_reachable_and_no_pair_has_two_rows(name: str) -> None:
    table = TABLES[name]
    machine = Machine(name, table, INITIAL[name])  # refuses two rows for one (state, trigger)
    assert len(machine.table) == len(table)
    reached = {INITIAL[name]}
    while True:
        more = {row.target for row in table if row.source in reached} - reached
        if not more:
            break
        reached |= more
    assert reached == {row.source for row in table} | {row.target for row in table}


def test_a_transition_outside_the_table_is_refused() -> None:
    machine = Machine("phase", PHASES, Phase.GAME_OVER)
    with pytest.raises(ModeError, match="no transition from GAME_OVER on START_POSITION_SHOWN"):
        machine.fire(PhaseTrigger.START_POSITION_SHOWN)
    assert machine.state is Phase.GAME_OVER


def test_the_engine_changes_modes_only_through_fire() -> None:
    for path in sorted(ENGINE_DIR.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name != "modes.py":
            assert not re.search(r"\.state\s*=[^=]", text), path.name
        if path.name != "state.py":
            assert not re.search(r"\.(phase|board_link|clock_link)\s*=[^=]", text), path.name
        assert "_Mode" not in text and "setting_up =" not in text and "_down =" not in text, path.name


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> Iterator[set[Taken]]:
    """Every (machine, source, trigger, target) the engine takes while the test runs."""
    seen: set[Taken] = set()
    fire = Machine.fire

    def recording(self: Machine, trigger: object) -> object:  # type: ignore[type-arg]
        source = self.state
        target = fire(self, trigger)  # type: ignore[arg-type]
        seen.add((self.name, source.name, trigger.name, target.name))  # type: ignore[attr-defined]
        return target

    monkeypatch.setattr(modes.Machine, "fire", recording)
    yield seen


def _internal_errors(outs: list[Output]) -> list[str]:
    return [o.irregularity.suggestion.text for o in outs if isinstance(o, IrregularityRaised)
            and "internal error" in o.irregularity.suggestion.text]


def _sim_games() -> None:
    kinds = [None, *InjectionKind]
    for seed in range(3 * len(kinds)):
        kind = kinds[seed % len(kinds)]
        game = random_game(seed, max_plies=40)
        injections: list[Injection] = []
        if kind is not None:
            board = game.board()
            for ply, move in enumerate(game.mainline_moves(), 1):
                if applicable(kind, board, move, has_next=True):
                    injections.append(Injection(kind, ply))
                    break
                board.push(move)
        sim = simulate_game(game, seed=seed, profile=PROFILES[seed % len(PROFILES)], injections=injections)
        _, found = run_engine(sim)
        assert not [i for i in found if "internal error" in i.suggestion.text], seed


def _scripted() -> list[Output]:
    outs: list[Output] = []
    # set-up: a dump with pieces missing before the first move, then the full start position
    engine = Engine()
    board = chess.Board()
    partial = tuple(board.piece_at(sq) if sq < 16 else None for sq in chess.SQUARES)
    outs += engine.feed(BoardSnapshot(at=0.0, squares=partial))
    outs += engine.feed(_dump(board, 1.0))
    # reinstatement: waiting for the board, then the board shows it; then reinstated at once; then a result
    engine, clock, board, more, t = _clocked_opening(4)
    outs += more
    outs += engine.feed(Reinstate(at=t, ply=2))
    board.pop()
    board.pop()
    outs += engine.feed(_dump(board, t + 0.5))
    outs += engine.advance(t + 2.0)
    outs += engine.feed(Reinstate(at=t + 3.0, ply=2))
    outs += engine.feed(SetResult(at=t + 4.0, result="1-0", termination="normal"))
    # a reinstatement awaited, then withdrawn: the two-handed castling's card, Reinstate, then Dismiss
    r = run(SCENARIOS["T08"])
    at_press = next(i for i in r.engine.irregularities if i.code == "TWO_HANDS_AT_PRESS")
    outs += r.engine.feed(Reinstate(at=5.0, ply=len(r.engine.state.moves) - 1))
    outs += r.engine.feed(Resolve(at=6.0, irregularity_id=at_press.id, ruling="one hand", accept=False))
    # a game ended by checkmate on the board
    engine, clock, board, more, t = _clocked_opening(0)
    outs += more
    more, t = _play(engine, board, ["f3", "e5", "g4", "Qh4#"], t, clock)
    outs += more
    assert engine.state.result == "0-1"
    # board outage, then the board reports again; clock outage, back by its link and by a reading
    engine, clock, board, more, t, _ = _outage_game(["Nf3"])
    outs += more
    outs += engine.feed(LinkChanged(at=t, link=Link.CLOCK, up=False))
    outs += engine.feed(LinkChanged(at=t + 0.5, link=Link.CLOCK, up=True))
    outs += engine.feed(LinkChanged(at=t + 1.0, link=Link.CLOCK, up=False))
    outs += engine.feed(clock.reading(t + 1.5))
    return outs


def test_every_transition_the_engine_takes_is_in_its_table(taken: set[Taken]) -> None:
    outs = _scripted()
    assert not _internal_errors(outs)
    _sim_games()
    rows = {(name, row.source.name, row.trigger.name, row.target.name)
            for name, table in TABLES.items() for row in table}
    print("\n".join(" ".join(t) for t in sorted(taken)))
    assert taken <= rows, taken - rows
    triggers = {(name, trigger) for name, _, trigger, _ in taken}
    assert {("phase", t.name) for t in PhaseTrigger} <= triggers
    assert {("board link", t.name) for t in (LinkTrigger.LINK_DOWN, LinkTrigger.DEVICE_REPORTS)} <= triggers
    assert {("clock link", t.name) for t in LinkTrigger} <= triggers


def test_the_engine_raises_only_codes_of_the_code_table() -> None:
    codes: set[str] = set()
    for path in ENGINE_DIR.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        codes |= set(re.findall(r'(?:raise_finding|illegal_press)\([^"]*"([A-Z][A-Z0-9_]+)"', text))
        codes |= set(re.findall(r'\bcode(?:, \w+)? = "([A-Z][A-Z0-9_]+)"', text))
    assert len(codes) > 40, sorted(codes)
    for code in sorted(codes):
        for edition in (2009, 2014, 2018, 2023):
            assert code_info(code, edition).code == code


def test_rooms_reach_each_other_only_through_the_facade() -> None:
    shared = {"common", "modes", "state"}
    for path in sorted(ENGINE_DIR.glob("*.py")):
        if path.stem in ("facade", "__init__"):
            continue
        imported = set(re.findall(r"^\s*from boardd\.core\.engine\.(\w+) import", path.read_text(encoding="utf-8"),
                                  re.M))
        assert imported <= shared | {"facade"}, (path.name, imported - shared)
