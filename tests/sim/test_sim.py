"""The simulator without the engine: physical consistency, determinism, coverage of special moves, real games."""

from __future__ import annotations

import io
import itertools
from collections import Counter
from pathlib import Path

import chess
import chess.pgn
import pytest

from boardd.core.events import BoardSnapshot, ClockReading, ClockSide, NewGame, Reinstate, SetClock, SquareChanged
from drivers.sim import (
    PROFILES,
    Injection,
    InjectionKind,
    SimulatedGame,
    SimulationError,
    applicable,
    expected_codes,
    random_game,
    simulate_game,
)
from tests.sim.physical import Replay, positions, replay

T_SIMUL = 0.25
D_FAR = 3


def _start(sim: SimulatedGame) -> chess.Board:
    fen = sim.game.start_fen
    return chess.Board(fen, chess960=sim.game.chess960) if fen else chess.Board()


def assert_physically_consistent(sim: SimulatedGame) -> None:
    """At every press the board shows the position after the move just completed; time never goes back."""
    assert isinstance(sim.events[0], NewGame)
    assert isinstance(sim.events[1], BoardSnapshot)
    times = [e.at for e in sim.events]
    assert times == sorted(times)
    state = replay(sim.events)
    after = positions(_start(sim), sim.moves)
    # Every ply is completed by a press, except a last move that ends the game on the board.
    assert len(state.presses) in (len(after), len(after) - 1)
    board = _start(sim)
    for ply, (press, expected) in enumerate(zip(state.presses, after, strict=False), start=1):
        assert press.placement == expected, f"ply {ply}: board at the press differs"
        mover_side = ClockSide.LEFT if board.turn == chess.WHITE else ClockSide.RIGHT
        assert press.side == mover_side, f"ply {ply}: the wrong side pressed"
        board.push(board.parse_uci(sim.moves[ply - 1]))
    assert state.placement() == (after[-1] if after else _start(sim).piece_map())


def assert_no_two_hand_signature(sim: SimulatedGame) -> None:
    """No two lifts (or two placements) of different squares within T_simul at distance >= D_far (R01 a, b)."""
    changes = replay(sim.events).changes
    for kind in ("lift", "place"):
        picked = [c for c in changes if (c.content is None) == (kind == "lift")]
        for first, second in itertools.pairwise(picked):
            if second.at - first.at < T_SIMUL and first.square != second.square:
                assert chess.square_distance(first.square, second.square) < D_FAR, (first, second)


def assert_clock_plausible(sim: SimulatedGame) -> None:
    readings = [e for e in sim.events if isinstance(e, ClockReading)]
    assert readings, "no clock readings"
    for reading in readings:
        assert not reading.left_flag and not reading.right_flag, reading
        assert reading.left is not None and reading.right is not None
        assert reading.left == int(reading.left) and reading.right == int(reading.right)  # 1 s resolution
    # While a clock runs, a reading comes at least once a second (plus the <= 300 ms by which the
    # reading showing a press may come after the tick it replaces).
    for previous, current in itertools.pairwise(readings):
        if previous.running is not None and current.running is not None:
            assert current.at - previous.at <= 1.3 + 1e-6, (previous, current)


@pytest.mark.parametrize("profile", PROFILES)
def test_random_games_are_physically_consistent(profile: str) -> None:
    for seed in range(25):
        sim = simulate_game(seed=seed, profile=profile)
        assert sim.moves == [m.uci() for m in random_game(seed).mainline_moves()]
        assert_physically_consistent(sim)
        assert_no_two_hand_signature(sim)
        assert_clock_plausible(sim)
        assert sim.injections == ()
        if profile != "clumsy":
            assert sim.expected_codes == []
        else:
            assert {code for _, code in sim.expected_codes} <= {"TOUCH_MOVE_SUSPECTED"}


def test_profiles_differ_in_what_the_board_reports() -> None:
    """casual shows slides, flicker and new-before-old; clean only lifts then places; clumsy adds incidents."""
    def stats(profile: str) -> Counter[str]:
        counts: Counter[str] = Counter()
        for seed in range(15):
            sim = simulate_game(seed=seed, profile=profile)
            state = replay(sim.events)
            counts["changes"] += len(state.changes)
            counts["plies"] += len(sim.moves)
            counts["expected"] += len(sim.expected_codes)
            previous: dict[int, SquareChanged] = {}
            for change in state.changes:
                before = previous.get(change.square)
                if before is not None and change.at - before.at < 0.25:
                    counts["quick-revert"] += 1
                previous[change.square] = change
        return counts

    clean, casual, clumsy = stats("clean"), stats("casual"), stats("clumsy")
    # clean: captures are 3 changes, quiet moves 2, castling 4, so changes / plies stays well under 3.
    assert clean["changes"] / clean["plies"] < 3.0
    assert clean["quick-revert"] == 0
    assert casual["changes"] > clean["changes"] * 1.15
    assert casual["quick-revert"] > 0  # transit squares and flicker
    assert clumsy["expected"] > 0  # changed minds with a movable piece


def test_events_are_in_time_order_even_when_a_move_starts_on_a_clock_tick() -> None:
    # Seed 260 with 1 s thinks has a lift 0.01 ms before a display tick (found by the engine test).
    for profile in PROFILES:
        sim = simulate_game(seed=260, profile=profile, think_median=1.0)
        times = [e.at for e in sim.events]
        assert times == sorted(times)


def test_deterministic_by_seed() -> None:
    for profile in PROFILES:
        one = simulate_game(seed=7, profile=profile)
        two = simulate_game(seed=7, profile=profile)
        assert one.events == two.events
        assert one.expected_codes == two.expected_codes
        other = simulate_game(random_game(7), seed=8, profile=profile)
        assert other.moves == one.moves
        assert other.events != one.events


def test_five_hundred_random_games_contain_every_special_move() -> None:
    counts: Counter[str] = Counter()
    for seed in range(500):
        game = random_game(seed)
        board = game.board()
        for move in game.mainline_moves():
            if board.is_en_passant(move):
                counts["en passant"] += 1
            elif board.is_kingside_castling(move):
                counts["O-O"] += 1
            elif board.is_queenside_castling(move):
                counts["O-O-O"] += 1
            if move.promotion is not None:
                counts["underpromotion" if move.promotion != chess.QUEEN else "queen"] += 1
            board.push(move)
    assert set(counts) == {"en passant", "O-O", "O-O-O", "underpromotion", "queen"}, counts
    assert min(counts.values()) >= 20, counts


def test_random_chess960_games() -> None:
    for seed in (0, 518, 959):
        game = random_game(seed, chess960=True)
        sim = simulate_game(game, seed=seed, profile="casual")
        assert sim.game.chess960
        assert sim.game.start_fen == chess.Board.from_chess960_pos(seed).fen()
        assert_physically_consistent(sim)


def _games(path: Path) -> list[chess.pgn.Game]:
    games = []
    with path.open(encoding="utf-8-sig") as stream:
        while (game := chess.pgn.read_game(stream)) is not None:
            games.append(game)
    return games


@pytest.mark.slow
def test_every_shared_pgn_game_simulates(pgn_dir: Path) -> None:
    """All 374 games; the profile rotates so that every profile sees every file."""
    total = 0
    for path in sorted(pgn_dir.glob("*.pgn")):
        for index, game in enumerate(_games(path)):
            assert not game.errors, (path.name, index, game.errors)
            sim = simulate_game(game, seed=index, profile=PROFILES[index % 3], think_median=1.0)
            assert_physically_consistent(sim)
            total += 1
    assert total == 374


def test_chess960_pgn_castles_with_the_recommended_procedure(pgn_dir: Path) -> None:
    games = _games(pgn_dir / "cutechess-fischerrandom.pgn")
    castlings = 0
    for index, game in enumerate(games):
        sim = simulate_game(game, seed=index, profile="clean", think_median=2.0)
        assert sim.game.chess960 and sim.game.start_fen is not None
        assert sim.game.time_control == "40/5400+30:1800+30"  # "10+0.05" cannot be played by hand
        assert_physically_consistent(sim)
        board = _start(sim)
        for uci in sim.moves:
            move = board.parse_uci(uci)
            if board.is_castling(move):
                castlings += 1
            board.push(move)
    assert castlings >= 4


CLOCK_PGN = """[Event "clock test"]
[White "A"]
[Black "B"]
[Result "*"]
[TimeControl "900+10"]

1. e4 { [%clk 0:14:58] } e5 { [%clk 0:14:40] } 2. Nf3 { [%clk 0:14:10] } Nc6 { [%clk 0:13:00] }
3. Bb5 { [%clk 0:12:30] } a6 { [%clk 0:12:55] } *
"""


def test_pgn_clock_comments_drive_think_times() -> None:
    game = chess.pgn.read_game(io.StringIO(CLOCK_PGN))
    assert game is not None
    sim = simulate_game(game, seed=1, profile="clean")
    assert sim.game.time_control == "900+10"
    state = replay(sim.events)
    assert len(state.presses) == 6
    wanted = [node.clock() for node in game.mainline()]
    readings = state.readings
    for press, clk in zip(state.presses, wanted, strict=True):
        after = next(r for r in readings if r.at > press.at)  # the reading that shows the press
        shown = after.left if press.side is ClockSide.LEFT else after.right
        assert clk is not None and shown is not None
        assert abs(shown - clk) <= 2.0, (press, shown, clk)


# --- injections -------------------------------------------------------------------


def _find(kind: InjectionKind, *, chess960: bool = False) -> tuple[chess.pgn.Game, int]:
    for seed in range(200):
        game = random_game(seed, chess960=chess960)
        board = game.board()
        moves = list(game.mainline_moves())
        for index, move in enumerate(moves):
            if index >= 4 and applicable(kind, board, move, has_next=index + 1 < len(moves)):
                return game, index + 1
            board.push(move)
    raise AssertionError(f"no random game fits {kind}")


@pytest.mark.parametrize("kind", list(InjectionKind))
def test_every_injection_is_scripted_and_keeps_the_game(kind: InjectionKind) -> None:
    game, ply = _find(kind)
    injection = Injection(kind, ply)
    sim = simulate_game(game, seed=3, profile="clean", injections=[injection])
    assert sim.expected_codes == [(ply, code) for code in expected_codes(injection)]
    assert sim.moves == [m.uci() for m in game.mainline_moves()]
    state = replay(sim.events)
    assert state.placement() == positions(_start(sim), sim.moves)[-1]
    times = [e.at for e in sim.events]
    assert times == sorted(times)
    assert str(injection) == f"{kind.value}@{ply}"
    assert Injection.parse(str(injection)) == injection
    assert sim.header.extra["simulator"]["injections"] == [str(injection)]

    board = _start(sim)
    for uci in sim.moves[: ply - 1]:
        board.push(board.parse_uci(uci))
    move = board.parse_uci(sim.moves[ply - 1])
    before = board.piece_map()
    board.push(move)
    made = board.piece_map()
    ply_presses = state.presses[ply - 1:]

    if kind is InjectionKind.ROOK_FIRST:
        lifts = [c for c in state.changes if c.content is None and c.square in (move.from_square,)]
        rook_home = chess.H1 if chess.square_file(move.to_square) == 6 else chess.A1
        rook_home = chess.square(chess.square_file(rook_home), chess.square_rank(move.from_square))
        rook_lift = next(c for c in state.changes if c.content is None and c.square == rook_home
                         and c.at > lifts[0].at - 2)
        king_lift = next(c for c in state.changes if c.content is None and c.square == move.from_square
                         and c.at >= rook_lift.at)
        assert king_lift.at - rook_lift.at > 0.25  # more than one scan: the order is known
    elif kind is InjectionKind.TWO_HANDS_CASTLING:
        king_lift = next(c for c in state.changes if c.content is None and c.square == move.from_square
                         and before.get(c.square) == chess.Piece(chess.KING, not board.turn))
        nxt = state.changes[state.changes.index(king_lift) + 1]
        assert nxt.content is None and nxt.at - king_lift.at < T_SIMUL
        assert chess.square_distance(nxt.square, king_lift.square) >= D_FAR
    elif kind is InjectionKind.PRESS_NO_MOVE:
        assert ply_presses[0].placement == before
        assert any(isinstance(e, SetClock) for e in sim.events)
    elif kind is InjectionKind.PRESS_PIECE_IN_HAND:
        press = ply_presses[0]
        assert move.from_square not in press.placement and move.to_square not in press.placement
        placed = next(c for c in state.changes if c.square == move.to_square and c.at > press.at)
        assert placed.at - press.at > 0.5  # well beyond T_latency: on the opponent's time
    elif kind is InjectionKind.ILLEGAL_MOVE:
        press = ply_presses[0]
        (wrong,) = set(press.placement) - set(before)
        assert chess.Move(move.from_square, wrong) not in chess.Board(_fen_before(sim, ply)).legal_moves
        reinstates = [e for e in sim.events if isinstance(e, Reinstate)]
        assert [r.ply for r in reinstates] == [ply - 1]
        # presses: the illegal one, the lever set back by the arbiter (paused, no press), the real one
        assert ply_presses[2].placement == made
    elif kind is InjectionKind.PAWN_NOT_REPLACED:
        press = ply_presses[0]
        assert press.placement.get(move.to_square) == chess.Piece(chess.PAWN, not board.turn)
    elif kind is InjectionKind.KNOCK_NOT_RESTORED:
        press = ply_presses[0]
        missing = set(made) - set(press.placement)
        assert len(missing) == 1 and chess.square_distance(missing.pop(), move.to_square) == 1
    elif kind is InjectionKind.LATE_PRESS:
        # The mover's press comes only after the opponent's reply is on the board.
        reply_made = positions(_start(sim), sim.moves)[ply]
        assert ply_presses[0].placement == reply_made
    elif kind is InjectionKind.TOUCH_MOVE:
        first_lift = next(c for c in state.changes if c.content is None and c.at > _press_time(state, ply - 1))
        assert first_lift.square != move.from_square and first_lift.square in before
    elif kind is InjectionKind.RELEASED_TAKEN_BACK:
        # Another legal move stood on the board before the press, then the position before it, then the move.
        start = _press_time(state, ply - 1)
        shown = dict(before)
        stood = []
        for change in (c for c in state.changes if start < c.at < ply_presses[0].at):
            if change.content is None:
                shown.pop(change.square, None)
            else:
                assert isinstance(change.content, chess.Piece)
                shown[change.square] = change.content
            stood.append(dict(shown))
        board.pop()
        others = []
        for other in board.legal_moves:
            board.push(other)
            if other != move and board.piece_map() in stood:
                others.append(stood.index(board.piece_map()))
            board.pop()
        assert others and before in stood[min(others):] and stood[-1] == made


def _fen_before(sim: SimulatedGame, ply: int) -> str:
    board = _start(sim)
    for uci in sim.moves[: ply - 1]:
        board.push(board.parse_uci(uci))
    return board.fen()


def _press_time(state: Replay, index: int) -> float:
    return state.presses[index - 1].at if index > 0 else 0.0


def test_injection_errors() -> None:
    game = random_game(1)
    with pytest.raises(SimulationError, match="does not fit"):
        simulate_game(game, seed=1, injections=[Injection(InjectionKind.ROOK_FIRST, 1)])
    with pytest.raises(SimulationError, match="two injections"):
        simulate_game(game, seed=1, injections=[Injection(InjectionKind.PRESS_NO_MOVE, 3)] * 2)
    with pytest.raises(SimulationError, match="only"):
        simulate_game(game, seed=1, injections=[Injection(InjectionKind.PRESS_NO_MOVE, 999)])
    with pytest.raises(SimulationError, match="unknown profile"):
        simulate_game(game, seed=1, profile="drunk")
    with pytest.raises(ValueError, match="KIND@PLY"):
        Injection.parse("rook-first")
    with pytest.raises(ValueError, match="kinds"):
        Injection.parse("teleport@3")
    with pytest.raises(ValueError, match="edition"):
        expected_codes(Injection(InjectionKind.LATE_PRESS, 2), edition=2010)


def test_header_describes_the_simulation() -> None:
    sim = simulate_game(seed=5, profile="casual", white_clock_side=ClockSide.RIGHT, edition=2018)
    assert sim.header.game == sim.game
    assert sim.header.rules.white_clock_side is ClockSide.RIGHT
    assert sim.game.edition == 2018
    assert sim.header.extra["simulator"]["moves"] == sim.moves
    assert sim.header.extra["simulator"]["profile"] == "casual"
    first_running = next(e for e in sim.events if isinstance(e, ClockReading) and e.running is not None)
    assert first_running.running is ClockSide.RIGHT  # White's time is on the right


def test_late_press_before_a_mating_reply_leaves_the_mate_unpressed() -> None:
    for seed in range(300):
        game = random_game(seed)
        board = game.board()
        moves = list(game.mainline_moves())
        for move in moves:
            board.push(move)
        if board.is_checkmate():
            break
    else:
        raise AssertionError("no mate in 300 random games")
    sim = simulate_game(game, seed=seed, injections=[Injection(InjectionKind.LATE_PRESS, len(moves) - 1)])
    state = replay(sim.events)
    # Every ply is pressed except the mate; the late mover's press comes after the mate is on the board.
    assert len(state.presses) == len(moves) - 1
    assert state.presses[-1].placement == positions(_start(sim), sim.moves)[-1]


def test_casual_never_stops_a_piece_on_an_intermediate_square_for_t_settle() -> None:
    """A piece put on a square and taken off again within the same turn stays there < T_settle (400 ms).

    Exceptions by design: a piece put back on the square it started the turn on (j'adoube), and a pawn on the
    last rank (promotion order P1, where the pawn is exchanged on the promotion square).
    """
    t_settle = 0.4
    checked = 0
    for seed in range(25):
        sim = simulate_game(seed=seed, profile="casual")
        board: list[object] = [None] * 64
        turn_start: list[object] = []
        placed: dict[int, float] = {}
        lever = None
        for event in sim.events:
            if isinstance(event, BoardSnapshot):
                board = list(event.squares)
                turn_start = list(board)
            elif isinstance(event, ClockReading):
                if lever is not None and event.lever_high != lever:
                    turn_start = list(board)
                    placed.clear()
                lever = event.lever_high
            elif isinstance(event, SquareChanged):
                piece = board[event.square]
                if event.content is None and event.square in placed and isinstance(piece, chess.Piece):
                    home = turn_start[event.square] == piece
                    promotion_pawn = piece.piece_type == chess.PAWN and chess.square_rank(event.square) in (0, 7)
                    if not home and not promotion_pawn:
                        assert event.at - placed[event.square] < t_settle, (seed, event)
                        checked += 1
                if event.content is not None:
                    placed[event.square] = event.at
                else:
                    placed.pop(event.square, None)
                board[event.square] = event.content
    assert checked > 50  # transit squares were actually seen


@pytest.mark.parametrize("profile", ["clean", "casual"])
def test_first_own_piece_touched_is_the_piece_that_moves(profile: str) -> None:
    """No touch-move or rook-first signature: in each turn the mover's first lifted piece is the one that moves
    (the king when castling), whatever the opponent's pieces (a victim lifted first) or flicker do."""
    castlings = 0
    for seed in range(25):
        sim = simulate_game(seed=seed, profile=profile)
        board = _start(sim)
        state = replay(sim.events)
        starts = [0.0] + [p.at for p in state.presses]
        for index, uci in enumerate(sim.moves):
            move = board.parse_uci(uci)
            if index + 1 >= len(starts):
                break
            window = [c for c in state.changes if starts[index] < c.at <= starts[index + 1]]
            own_lifts = [c for c in window if c.content is None
                         and (piece := board.piece_at(c.square)) is not None and piece.color == board.turn]
            # A flicker dropout reverts within 250 ms on a square that is not part of the move: skip those.
            moving = [c for c in own_lifts if c.square == move.from_square
                      or not any(o.square == c.square and o.content is not None and 0 < o.at - c.at < 0.25
                                 for o in window)]
            assert moving and moving[0].square == move.from_square, (seed, index + 1, uci, moving[:2])
            castlings += board.is_castling(move)
            board.push(move)
    assert castlings > 0
