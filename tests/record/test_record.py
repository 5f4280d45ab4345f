"""boardd.core.record: PGN with broadcast tags and clock annotations."""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

import chess
import chess.pgn
import pytest

from boardd.core.outputs import ClockState, MoveRecord
from boardd.core.record import (
    archive_pgn,
    clock_tag,
    format_clock,
    game_pgn,
    pgn_game,
    pgn_round,
    pgn_termination,
    pgn_time_control,
    rebuild_pgn,
)
from tests.record.factories import (
    fractional_clock,
    make_state,
    records_from_moves,
    state_from_pgn_game,
    whole_clock,
)

PGN_FILES = ("London1851.pgn", "WorldChamp1886.pgn", "cutechess-fischerrandom.pgn", "kasparov-deep-blue-1997.pgn",
             "molinari-bordais-1979.pgn", "nepomniachtchi-liren-game1.pgn", "tatamast22.pgn")


def parse(text: str) -> chess.pgn.Game:
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    assert game.errors == [], game.errors
    return game


def quantized(seconds: float) -> float:
    """What format_clock keeps of *seconds*: whole seconds rounded down, tenths below 10 s."""
    if seconds <= 0:
        return 0.0
    tenths = math.floor(seconds * 10 + 1e-6)
    return tenths / 10 if seconds < 10 else float(tenths // 10)


def read_all(path: Path) -> list[chess.pgn.Game]:
    games = []
    with path.open(encoding="utf-8-sig") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            games.append(game)
    return games


# --- Clock rendering -------------------------------------------------------------------


@pytest.mark.parametrize(("seconds", "text"), [
    (5400, "1:30:00"),
    (3600, "1:00:00"),
    (919.99, "0:15:19"),           # rounded down, like the clock face
    (59.9996, "0:00:59"),          # python-chess's own formatter would write 0:00:60
    (918.9999999999, "0:15:19"),   # float noise of 930 - 11 is not a lost second
    (10.0, "0:00:10"),
    (9.99, "0:00:09.9"),           # tenths below ten seconds
    (4.37, "0:00:04.3"),
    (4.0, "0:00:04"),
    (0.05, "0:00:00"),
    (0, "0:00:00"),
    (-3.2, "0:00:00"),             # over the limit: the flag fell
    (math.nan, "0:00:00"),
    (36000 + 61, "10:01:01"),
])
def test_format_clock(seconds: float, text: str) -> None:
    assert format_clock(seconds) == text


@pytest.mark.parametrize("text", ["0:15:19", "0:00:04.3", "10:01:01"])
def test_clock_form_is_what_python_chess_and_lila_read(text: str) -> None:
    # lila reads H:MM:SS(.f); python-chess's regex is the same shape.
    assert re.fullmatch(r"\d+:\d\d:\d\d(\.\d)?", text)
    node = chess.pgn.Game().add_variation(chess.Move.from_uci("e2e4"), comment=f"[%clk {text}]")
    assert node.clock() is not None


# --- Tags ---------------------------------------------------------------------------------


def test_tags_seven_tag_roster_first_then_broadcast_tags() -> None:
    records, _ = records_from_moves(chess.Board(), [chess.Move.from_uci("e2e4")])
    text = game_pgn(make_state(records, result="1-0", termination="GAME_END_CHECKMATE"))
    names = re.findall(r'^\[(\w+) "', text, flags=re.M)
    assert names[:7] == ["Event", "Site", "Date", "Round", "White", "Black", "Result"]
    game = parse(text)
    assert game.headers["Round"] == "3.12"
    assert game.headers["Board"] == "12"
    assert game.headers["GameId"] == "r3-b12"
    assert game.headers["TimeControl"] == "40/5400+30:1800+30"
    assert game.headers["Termination"] == "normal"
    assert game.headers["Result"] == "1-0"
    assert game.headers["White"] == "Carlsen, Magnus"
    assert "FEN" not in game.headers
    assert "SetUp" not in game.headers
    assert "Variant" not in game.headers
    assert text.rstrip().endswith("1-0")


@pytest.mark.parametrize(("round_", "board_no", "expected"), [
    ("3", 12, "3.12"), ("3", None, "3"), ("3.12", 12, "3.12"), ("?", 4, "?"), ("", None, "?"), ("10", 1, "10.1"),
])
def test_round_tag(round_: str, board_no: int | None, expected: str) -> None:
    assert pgn_round(round_, board_no) == expected


def test_round_tag_board_number_as_lila_reads_it() -> None:
    # lila: roundNumber = leading digits of Round; boardNumber = Board tag, else the part after the dot.
    game = parse(game_pgn(make_state(round_="7", board_no=31)))
    round_no, _, board = game.headers["Round"].partition(".")
    assert (int(round_no), int(board), int(game.headers["Board"])) == (7, 31, 31)


@pytest.mark.parametrize(("given", "expected"), [
    ("40/5400+30:1800+30", "40/5400+30:1800+30"),
    ("900+10", "900+10"),
    ("180+2", "180+2"),
    ("40/7200:20/3600:900+30", "40/7200:20/3600:900+30"),
    ("10+0.05", "10+0.05"),
    ("-", "-"),
    ("?", "?"),
    ("ninety minutes", "?"),
    ("5400d5", "?"),      # a delay has no PGN form
    ("", "?"),
])
def test_time_control_tag(given: str, expected: str) -> None:
    assert pgn_time_control(given) == expected


@pytest.mark.parametrize(("termination", "expected"), [
    (None, None), ("GAME_END_STALEMATE", "normal"), ("FLAG_FALL", "time forfeit"),
    ("ILLEGAL_MOVE_LIMIT_REACHED", "rules infraction"), ("normal", "normal"), ("abandoned", "abandoned"),
    ("Resignation", "normal"), ("flag", "time forfeit"), ("emergency", "emergency"),
])
def test_termination_tag(termination: str | None, expected: str | None) -> None:
    assert pgn_termination(termination) == expected
    headers = parse(game_pgn(make_state(termination=termination))).headers
    assert headers.get("Termination") == expected


def test_tag_values_are_escaped() -> None:
    game = parse(game_pgn(make_state(white='O"Neil \\ Jr', black="丁立人")))
    assert game.headers["White"] == 'O"Neil \\ Jr'
    assert game.headers["Black"] == "丁立人"


def test_tag_values_stay_on_one_line() -> None:
    text = game_pgn(make_state(white="Carlsen,\nMagnus", event="Open\r\n2026", site="\u2028", result="draw"))
    game = parse(text)
    assert game.headers["White"] == "Carlsen, Magnus"
    assert game.headers["Event"] == "Open  2026"
    assert game.headers["Site"] == "?"
    assert game.headers["Result"] == "*"          # not a PGN result
    assert len(re.findall(r"^\[", text, flags=re.M)) == len(game.headers)


def test_unknown_board_and_game_id_leave_tags_out() -> None:
    game = parse(game_pgn(make_state(board_no=None, game_id="")))
    assert "Board" not in game.headers
    assert "GameId" not in game.headers
    assert game.headers["Round"] == "3"


# --- Moves and clocks ---------------------------------------------------------------------


def test_empty_game() -> None:
    text = game_pgn(make_state())
    game = parse(text)
    assert list(game.mainline_moves()) == []
    assert text.rstrip().endswith("*")


def test_clock_and_emt_per_move() -> None:
    moves = [chess.Move.from_uci(u) for u in ("e2e4", "e7e5", "g1f3")]
    records, _ = records_from_moves(chess.Board(), moves, clock=lambda i, side: (5400 - 2.5 * (i + 1), 2.5))
    text = game_pgn(make_state(records))
    assert "1. e4 { [%clk 1:29:57] [%emt 0:00:02.5] }" in text
    nodes = list(parse(text).mainline())
    assert [n.clock() for n in nodes] == [5397, 5395, 5392]
    assert [n.emt() for n in nodes] == [2.5, 2.5, 2.5]


def test_move_without_clock_has_no_clk() -> None:
    records, _ = records_from_moves(chess.Board(), [chess.Move.from_uci("d2d4")], clock=None)
    text = game_pgn(make_state(records))
    assert "%clk" not in text
    assert "%emt" not in text
    assert [m.uci() for m in parse(text).mainline_moves()] == ["d2d4"]


def test_set_up_position_black_to_move() -> None:
    start = chess.Board("4k3/8/8/8/8/8/4P3/4K3 b - - 0 40")
    records, _ = records_from_moves(start, [chess.Move.from_uci("e8d7"), chess.Move.from_uci("e2e4")])
    text = game_pgn(make_state(records, start_fen=start.fen()))
    game = parse(text)
    assert game.headers["SetUp"] == "1"
    assert game.headers["FEN"] == start.fen()
    assert "40... Kd7" in text
    assert "41. e4" in text
    assert [m.uci() for m in game.mainline_moves()] == ["e8d7", "e2e4"]


def test_chess960_tags_and_castling() -> None:
    # King b1, rooks a1/g1: O-O puts the king on g1 and the rook on f1 (king "takes" its own rook in UCI).
    start = chess.Board("rk4rq/pppppppp/8/8/8/8/PPPPPPPP/RK4RQ w KQkq - 0 1", chess960=True)
    start_fen = start.fen()
    moves = [start.parse_san("O-O")]
    board = start.copy()
    board.push(moves[0])
    moves.append(board.parse_san("O-O-O"))
    records, final = records_from_moves(start, moves)
    text = game_pgn(make_state(records, start_fen=start_fen, chess960=True))
    game = parse(text)
    assert game.headers["Variant"] == "Chess960"
    assert game.headers["SetUp"] == "1"
    assert game.headers["FEN"] == start_fen
    assert game.board().chess960
    assert list(game.mainline_moves()) == moves
    assert game.end().board().fen() == final.fen()
    assert "O-O" in text


def test_chess960_standard_start_still_says_chess960() -> None:
    start = chess.Board(chess960=True)
    records, _ = records_from_moves(start, [chess.Move.from_uci("e2e4")])
    game = parse(game_pgn(make_state(records, chess960=True)))
    assert game.headers["Variant"] == "Chess960"
    assert game.board().chess960


@pytest.mark.parametrize("start_fen", [None, chess.STARTING_FEN])
def test_chess960_standard_array_states_its_start_position(start_fen: str | None) -> None:
    """Position 518 is the classical array: a Chess960 game from it still carries SetUp and FEN (PGN's Chess960
    convention; lichess's broadcast import reads the castling as Chess960's only with them), with the same tag
    order as any other Chess960 start, and its castlings read back as Chess960 castlings."""
    start = chess.Board.from_chess960_pos(518)
    assert start.chess960 and start.fen() == chess.STARTING_FEN
    board = start.copy()
    moves = []
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1h1", "d8e7", "d2d3", "d7d6", "c1g5", "c8g4",
                "b1c3", "e8a8"):
        moves.append(board.push_uci(uci))
    records, final = records_from_moves(start, moves)
    state = make_state(records, start_fen=start_fen, chess960=True)
    text = game_pgn(state)
    assert text == rebuild_pgn(state)
    game = parse(text)
    assert (game.headers["FEN"], game.headers["SetUp"], game.headers["Variant"]) == (
        chess.STARTING_FEN, "1", "Chess960")
    tags = [line.split(" ")[0] for line in text.splitlines() if line.startswith("[")]
    assert tags[-3:] == ["[FEN", "[SetUp", "[Variant"]   # as game.setup writes them for any other position
    assert game.board().chess960
    assert list(game.mainline_moves()) == moves
    assert [m.uci() for m in game.mainline_moves()][6::7] == ["e1h1", "e8a8"]
    assert "O-O " in text and "O-O-O " in text
    assert game.end().board().fen() == final.fen()


def test_standard_game_from_the_standard_array_has_no_set_up_tags() -> None:
    records, _ = records_from_moves(chess.Board(), [chess.Move.from_uci("e2e4")])
    text = game_pgn(make_state(records))
    assert "[FEN" not in text and "[SetUp" not in text and "[Variant" not in text


def test_move_given_only_as_san_is_still_recorded() -> None:
    # A castling recorded in the other UCI form (king to rook) parses through SAN.
    board = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    record = MoveRecord(ply=1, uci="e1h1x", san="O-O", side=chess.WHITE, fen_after="", made_at=1.0)
    game = parse(game_pgn(make_state([record], start_fen=board.fen(), fen=board.fen())))
    assert [m.uci() for m in game.mainline_moves()] == ["e1g1"]


# --- Illegal moves that stood -------------------------------------------------------------


def _illegal_game() -> tuple[str, list[MoveRecord]]:
    # rules-spec T40: 3.Bf1-c5 (illegal) Nf6, then the game goes on from the physical position.
    legal = [chess.Move.from_uci(u) for u in ("e2e4", "e7e5", "g1f3", "b8c6")]
    records, board = records_from_moves(chess.Board(), legal)
    board.remove_piece_at(chess.F1)
    board.set_piece_at(chess.C5, chess.Piece(chess.BISHOP, chess.WHITE))
    board.turn = chess.BLACK
    illegal = MoveRecord(ply=5, uci="f1c5", san="Bf1-c5", side=chess.WHITE, fen_after=board.fen(), made_at=200.0,
                         clock_white=5300.0, emt=3.0, legal=False)
    after = board.copy()
    after.push(chess.Move.from_uci("g8f6"))
    follow = MoveRecord(ply=6, uci="g8f6", san="Nf6", side=chess.BLACK, fen_after=after.fen(), made_at=210.0,
                        clock_black=5290.0, emt=9.0)
    records += [illegal, follow]
    return game_pgn(make_state(records, illegal_white=0)), records


def test_illegal_move_that_stood_keeps_the_pgn_parseable() -> None:
    text, records = _illegal_game()
    game = parse(text)
    # The movetext is the legal prefix.
    assert [m.uci() for m in game.mainline_moves()] == ["e2e4", "e7e5", "g1f3", "b8c6"]
    last = game.end()
    # The clock of the last legal move is still its own.
    assert last.clock() == records[3].clock_black
    # The rest of the record is in the comment, in the rules-spec notation, with the physical position.
    assert "3. Bf1-c5 (illegal, f1c5) clk 1:28:20 emt 0:00:03" in last.comment
    assert "3... Nf6 (g8f6) clk 1:28:10" in last.comment
    assert records[-1].fen_after in last.comment
    assert last.comment.count("[%clk") == 1


def test_illegal_first_move_goes_before_the_movetext() -> None:
    board = chess.Board()
    board.remove_piece_at(chess.E2)
    board.set_piece_at(chess.E5, chess.Piece(chess.PAWN, chess.WHITE))
    board.turn = chess.BLACK
    record = MoveRecord(ply=1, uci="e2e5", san="e2-e5", side=chess.WHITE, fen_after=board.fen(), made_at=1.0,
                        legal=False)
    text = game_pgn(make_state([record]))
    game = parse(text)
    assert list(game.mainline_moves()) == []
    assert "1. e2-e5 (illegal, e2e5)" in game.comment


def test_move_that_does_not_replay_is_not_lost() -> None:
    # Marked legal but not playable here (corrupt record): logged, kept in the comment, never a crash.
    record = MoveRecord(ply=1, uci="e2e5", san="e5", side=chess.WHITE, fen_after="8/8/8/8/8/8/8/8 b - - 0 1",
                        made_at=1.0)
    game = parse(game_pgn(make_state([record], fen=chess.STARTING_FEN)))
    assert "could not be replayed" in game.comment
    assert "e2e5" in game.comment


# --- Round trip over the real games ---------------------------------------------------------


@pytest.mark.parametrize("name", PGN_FILES)
def test_round_trip_real_games(pgn_dir: Path, name: str) -> None:
    games = read_all(pgn_dir / name)
    assert games
    plies = 0
    for index, original in enumerate(games):
        clock = fractional_clock if index % 2 else whole_clock
        state = state_from_pgn_game(original, clock=clock, detail=False)
        text = game_pgn(state)
        if index < 12:
            # game_pgn's exporter (SAN computed once, cached) writes exactly what python-chess's does.
            exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
            assert text == pgn_game(state).accept(exporter) + "\n"
        back = parse(text)
        assert list(back.mainline_moves()) == list(original.mainline_moves()), original.headers
        assert back.board().fen() == original.board().fen()
        assert back.board().chess960 == original.board().chess960
        assert back.headers["Result"] == state.result
        for record, node in zip(state.moves, back.mainline(), strict=True):
            remaining = record.clock_white if record.side == chess.WHITE else record.clock_black
            assert remaining is not None and record.emt is not None
            assert node.clock() == pytest.approx(quantized(remaining), abs=1e-9)
            assert node.emt() == pytest.approx(quantized(record.emt), abs=1e-9)
            if clock is whole_clock:
                assert node.clock() == remaining
        plies += len(state.moves)
    assert plies > 0


def test_growing_record_renders_like_a_fresh_one() -> None:
    # The replay cache: a record growing move by move, then retracted, renders as if rendered afresh.
    moves = [chess.Move.from_uci(u) for u in ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6")]
    records, _ = records_from_moves(chess.Board(), moves)
    exporter = chess.pgn.StringExporter
    lengths = [*range(len(records) + 1), 2, 6, 0, 3]
    for length in lengths:
        state = make_state(records[:length])
        text = game_pgn(state)
        assert text == pgn_game(state).accept(exporter(headers=True, variations=False, comments=True)) + "\n"
        assert [m.uci() for m in parse(text).mainline_moves()] == [m.uci() for m in moves[:length]]


def test_move_that_does_not_replay_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    # A record no other test uses (the replay cache is keyed on the moves).
    record = MoveRecord(ply=1, uci="a2a6", san="a6", side=chess.WHITE, fen_after="8/8/8/8/8/8/8/8 b - - 0 1",
                        made_at=1.0)
    state = make_state([record], fen=chess.STARTING_FEN, game_id="logged-once")
    for _ in range(3):
        game_pgn(state)
    assert sum("does not replay" in r.getMessage() for r in caplog.records) == 1


def test_archive_pgn_several_games(pgn_dir: Path) -> None:
    games = read_all(pgn_dir / "kasparov-deep-blue-1997.pgn")[:4]
    states = [state_from_pgn_game(g) for g in games]
    text = archive_pgn(states)
    assert "\n\n\n" not in text.strip()
    handle = io.StringIO(text)
    back = []
    while (game := chess.pgn.read_game(handle)) is not None:
        assert game.errors == []
        back.append(game)
    assert len(back) == 4
    for original, parsed in zip(games, back, strict=True):
        assert list(parsed.mainline_moves()) == list(original.mainline_moves())


def test_archive_pgn_empty() -> None:
    assert archive_pgn([]) == ""


def test_pawn_not_replaced_without_uci() -> None:
    # rules-spec T27: "1.e8 (pawn not replaced) Kf6"; the engine has no UCI for it ("0000").
    start = chess.Board("8/4P1k1/8/8/8/8/8/4K3 w - - 0 1")
    physical = "4P3/6k1/8/8/8/8/8/4K3 b - - 0 1"
    records = [MoveRecord(ply=1, uci="0000", san="e7-e8", side=chess.WHITE, fen_after=physical, made_at=0.3,
                          legal=False),
               MoveRecord(ply=2, uci="g7f6", san="Kf6", side=chess.BLACK, fen_after="4P3/8/5k2/8/8/8/8/4K3 w - - 1 2",
                          made_at=2.8)]
    game = parse(game_pgn(make_state(records, start_fen=start.fen(), fen=start.fen())))
    assert "1. e7-e8 (illegal); 1... Kf6 (g7f6)." in game.comment
    assert "0000" not in game.comment


def test_white_and_black_clock_tags_carry_the_current_clock() -> None:
    """lila#14843: ``[WhiteClock]``/``[BlackClock]`` in DGT's form give viewers a live clock for the player to move."""
    records, _ = records_from_moves(chess.Board(), [chess.Move.from_uci("e2e4")])
    clock = ClockState(white=5423.9, black=4.99, running=chess.BLACK)
    text = game_pgn(make_state(records, clock=clock))
    game = parse(text)
    assert game.headers["WhiteClock"] == "01:30:23"  # rounded down, hours padded as DGT LiveChess writes them
    assert game.headers["BlackClock"] == "00:00:04"  # no tenths in a tag
    names = re.findall(r'^\[(\w+) "', text, flags=re.M)
    assert names.index("WhiteClock") > names.index("Result")  # after the Seven Tag Roster
    half_known = parse(game_pgn(make_state(records, clock=ClockState(white=60.0, black=None, running=None))))
    assert half_known.headers["WhiteClock"] == "00:01:00" and "BlackClock" not in half_known.headers
    unknown = parse(game_pgn(make_state(records, clock=ClockState(white=None, black=None, running=None))))
    assert "WhiteClock" not in unknown.headers and "BlackClock" not in unknown.headers
    assert clock_tag(-3.0) == clock_tag(math.nan) == "00:00:00"
    assert clock_tag(36000 + 59.9996) == "10:00:59"  # never rounded up to a minute the player did not have
