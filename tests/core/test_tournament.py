"""Tournament files: TRF, pairing-engine output and CSV in; TRF results and CSV out."""

from __future__ import annotations

import csv
import io

import pytest

from boardd.core.tournament import (
    TRF_BOARD_RULE,
    TournamentFileError,
    read_csv,
    read_pairing_engine,
    read_round,
    read_trf,
    split_lines,
    trf_players,
    trf_result_codes,
    write_trf_results,
)
from tests.core.trf import TrfPlayer, player_line, swiss, trf_text


def test_player_fields_and_columns() -> None:
    players = [TrfPlayer(rank=1, name="Kasparov, Garry", rating=2812, fed="RUS", fide_id="4100018", title="GM",
                         rounds=[(2, "w", " ")]),
               TrfPlayer(rank=2, name="Polgar, Judit", rating=2735, fed="HUN", fide_id="700070", title="GM", sex="w",
                         rounds=[(1, "b", " ")])]
    line = player_line(players[0])
    assert line[91:95] == "   2" and line[96] == "w"  # columns 92-95 and 97, as tournament-files.md says
    rf = read_trf(trf_text(players), 1)
    assert rf.event == "Test Open 2026" and rf.format == "trf" and rf.board_rule == TRF_BOARD_RULE
    (game,) = rf.games
    assert (game.board_no, game.white.name, game.black.name) == (1, "Kasparov, Garry", "Polgar, Judit")
    assert (game.white.rating, game.white.fide_id, game.white.title, game.white.federation) == (2812, "4100018", "GM",
                                                                                                   "RUS")
    assert (game.black.rating, game.black.fide_id, game.black.rank) == (2735, "700070", 2)
    assert game.line == 11  # 10 header lines, then player 1 (White)


@pytest.mark.parametrize("eol", ["\r", "\n", "\r\n"])
def test_line_ends_do_not_matter(eol: str) -> None:
    players = swiss(20, 2)
    rf = read_trf(trf_text(players, eol=eol), 3)
    assert len(rf.games) == 10 and not rf.byes
    assert rf == read_trf(trf_text(players, eol="\r"), 3)


def test_board_order_is_score_then_rank() -> None:
    players = swiss(12, 3)
    rf = read_trf(trf_text(players), 4)
    scores = {p.rank: sum({"1": 1.0, "=": 0.5}.get(b[2], 0.0) for b in p.rounds[:3] if b) for p in players}
    keys = [(-max(scores[g.white.rank], scores[g.black.rank]), -min(scores[g.white.rank], scores[g.black.rank]),
             min(g.white.rank, g.black.rank)) for g in rf.games]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert [g.board_no for g in rf.games] == list(range(1, 7))
    # every player is in exactly one game, and each game is the pair the file gives for round 4
    for g in rf.games:
        assert players[g.white.rank - 1].rounds[3] == (g.black.rank, "w", " ")
        assert players[g.black.rank - 1].rounds[3] == (g.white.rank, "b", " ")


def test_forfeits_byes_and_withdrawn_players() -> None:
    players = swiss(8, 2)
    # round 2 game between 1 and x was a forfeit: the results say + and -
    opp = players[0].rounds[1]
    assert opp is not None
    players[0].rounds[1] = (opp[0], opp[1], "+")
    other = players[opp[0] - 1].rounds[1]
    assert other is not None
    players[opp[0] - 1].rounds[1] = (other[0], other[1], "-")
    # a ninth player with a half-point bye in round 3, a tenth who withdrew after round 1 (blank round 3)
    players.append(TrfPlayer(rank=9, name="Late, Comer", rating=1900, rounds=[(0, "-", "U"), (0, "-", "Z"),
                                                                                (0, "-", "H")]))
    players.append(TrfPlayer(rank=10, name="Gone, Away", rounds=[(0, "-", "F"), (0, "-", "-")]))
    rf = read_trf(trf_text(players), 3)
    assert len(rf.games) == 4
    byes = {b.player.rank: b.kind for b in rf.byes}
    assert byes == {9: "H", 10: ""}
    # a round-3 game decided by forfeit before the round (colour "-", + and -): no board for it
    first = rf.games[0]
    players[first.white.rank - 1].rounds[2] = (first.black.rank, "-", "+")
    players[first.black.rank - 1].rounds[2] = (first.white.rank, "-", "-")
    forfeited = read_trf(trf_text(players), 3)
    assert len(forfeited.games) == 3 and first.white.rank not in {g.white.rank for g in forfeited.games}
    assert {b.player.rank: b.kind for b in forfeited.byes} == {9: "H", 10: "", first.white.rank: "+",
                                                                first.black.rank: "-"}
    # the forfeit counts: + is a point, - is none (board order uses the scores before the round)
    from boardd.core import tournament

    lines, _, _ = tournament._trf_lines(trf_text(players))
    assert tournament._score_before(lines[1], 3) == sum(
        {"1": 1.0, "=": 0.5, "+": 1.0}.get(b[2], 0.0) for b in players[0].rounds[:2] if b)
    assert tournament._score_before(lines[opp[0]], 3) == sum(
        {"1": 1.0, "=": 0.5}.get(b[2], 0.0) for b in players[opp[0] - 1].rounds[:2] if b)
    assert tournament._score_before(lines[9], 3) == 1.0  # U counts a point, Z none


def _error(callable_: object, *args: object) -> TournamentFileError:
    with pytest.raises(TournamentFileError) as info:
        callable_(*args)  # type: ignore[operator]
    return info.value


def test_trf_errors_name_line_and_column() -> None:
    players = swiss(6, 1)
    text = trf_text(players)
    lines = split_lines(text)
    # player 3's round-2 opponent rewritten to 6: player 6's line names someone else
    broken = players[:]
    block = broken[2].rounds[1]
    assert block is not None
    wrong = 6 if block[0] != 6 else 5
    broken[2] = TrfPlayer(rank=3, name=players[2].name, rounds=[players[2].rounds[0], (wrong, block[1], " ")])
    err = _error(read_trf, trf_text(broken), 2)
    assert (err.column, "round 2 opponent") == (102, err.field)
    assert err.line in {10 + 3, 10 + wrong, 10 + block[0]}  # a line of one of the players involved
    assert f"line {err.line}" in str(err) and "column 102" in str(err)
    # a colour that is not w/b/-
    lines[11] = lines[11][:106] + "x" + lines[11][107:]
    err = _error(read_trf, "\r".join(lines) + "\r", 2)
    assert (err.line, err.column, err.field) == (12, 107, "round 2 colour")
    # a result code that does not exist
    lines = split_lines(text)
    lines[10] = lines[10][:98] + "7" + lines[10][99:]
    err = _error(read_trf, "\r".join(lines), 1)
    assert (err.line, err.column, err.field) == (11, 99, "round 1 result")
    # a rating that is not a number
    lines = split_lines(text)
    lines[12] = lines[12][:48] + "2k00" + lines[12][52:]
    err = _error(read_trf, "\r".join(lines), 2)
    assert (err.line, err.column, err.field) == (13, 49, "rating")
    # the same starting rank twice
    lines = split_lines(text)
    lines.append(lines[10])
    err = _error(read_trf, "\r".join(lines), 2)
    assert (err.line, err.column) == (17, 5) and "line 11" in str(err)
    # a round the file does not have
    err = _error(read_trf, text, 5)
    assert "round 5 is not in the file" in str(err)


def test_pairing_engine_output() -> None:
    players = [*swiss(9 - 1, 2, next_round=False), TrfPlayer(rank=9, name="Odd, One", rounds=[(0, "-", "U")] * 2)]
    roster = trf_players(trf_text(players))
    rf = read_pairing_engine("5\n3 1\n2 5\n7 4\n8 6\n9 0\n", 3, roster)
    assert [(g.board_no, g.white.rank, g.black.rank, g.line) for g in rf.games] == \
        [(1, 3, 1, 2), (2, 2, 5, 3), (3, 7, 4, 4), (4, 8, 6, 5)]
    assert [(b.player.rank, b.kind) for b in rf.byes] == [(9, "U")]
    assert rf.games[0].white.name == "Player003, Anna" and rf.games[0].black.fide_id == "1500001"
    # CR-only ends too
    assert read_pairing_engine("5\r3 1\r2 5\r7 4\r8 6\r9 0\r", 3, roster).games == rf.games
    err = _error(read_pairing_engine, "5\n3 1\n2 5\n7 4\n8 6\n", 3, roster)
    assert "announces 5 pairs, the file has 4" in str(err)
    err = _error(read_pairing_engine, "2\n3 1\n2 12\n", 3, roster)
    assert (err.line, err.column, err.field) == (3, 3, "black") and "12" in str(err)
    err = _error(read_pairing_engine, "2\n3 1\n1 5\n", 3, roster)
    assert (err.line, err.column, err.field) == (3, 1, "white") and "line 2" in str(err)
    err = _error(read_pairing_engine, "two\n3 1\n", 3, roster)
    assert (err.line, err.field) == (1, "number of pairs")
    err = _error(read_round, b"1\n3 1\n", 3)
    assert "--players" in str(err)


@pytest.mark.parametrize("sep", [",", ";", "\t"])
def test_csv(sep: str) -> None:
    rows = [["Bo.", "White", "Rtg", "White FIDE ID", "Black", "Black Elo", "Black FIDE ID", "Result"],
            ["2", "Giri, Anish", "2745", "24116068", "Firouzja, Alireza", "2760", "12573981", ""],
            ["1", "Carlsen, Magnus", "", "1503014", "Caruana, Fabiano", "2795", "2020009", "1-0"],
            ["3", "Nobody, Ann", "", "", "bye", "", "", ""]]
    rows[0][2] = "White Elo"
    out = io.StringIO()
    csv.writer(out, delimiter=sep, lineterminator="\r\n").writerows(rows)
    text = out.getvalue()
    rf = read_csv(text, 4)
    assert [(g.board_no, g.white.name, g.black.name) for g in rf.games] == \
        [(1, "Carlsen, Magnus", "Caruana, Fabiano"), (2, "Giri, Anish", "Firouzja, Alireza")]
    assert (rf.games[0].white.rating, rf.games[0].white.fide_id, rf.games[0].black.rating) == (None, "1503014", 2795)
    assert rf.games[1].white.rating == 2745 and rf.games[1].black.fide_id == "12573981"
    assert [b.player.name for b in rf.byes] == ["Nobody, Ann"]
    assert read_round(text.encode("latin-1"), 4).games == rf.games


def test_csv_errors_and_rounds() -> None:
    text = "round,board,white,black,white elo\n3,1,A,B,2000\n4,1,C,D,2100\n4,2,E,F,21x0\n"
    err = _error(read_csv, text, 4)
    assert (err.line, err.column, err.field) == (4, 5, "white rating")
    ok = read_csv(text.replace("21x0", "2150"), 4)
    assert [(g.white.name, g.white.rating) for g in ok.games] == [("C", 2100), ("E", 2150)]
    err = _error(read_csv, "board,white,black\n1,A,B\n1,C,D\n", 1)
    assert (err.line, err.column) == (3, 1) and "already used on line 2" in str(err)
    err = _error(read_csv, "board,white,black\nx,A,B\n", 1)
    assert (err.line, err.column, err.field) == (2, 1, "board")
    err = _error(read_csv, "board,name,opponent\n1,A,B\n", 1)
    assert err.line == 1 and "'white'" in str(err)
    err = _error(read_csv, "board,white,black\n1,,B\n", 1)
    assert (err.line, err.column, err.field) == (2, 2, "white")


def test_results_into_the_trf_round_trip() -> None:
    players = swiss(10, 2)
    text = trf_text(players)
    rf = read_trf(text, 3)
    results = {}
    for i, g in enumerate(rf.games):
        codes = trf_result_codes(["1-0", "0-1", "1/2-1/2", "1-0", "0-1"][i], "forfeit" if i == 3 else "normal")
        assert codes is not None
        results[(g.white.rank, g.black.rank)] = codes
    out = write_trf_results(text, 3, results)
    assert out.count("\r") == text.count("\r") and "\n" not in out  # line ends kept
    again = read_trf(out, 3)
    assert again.games == rf.games  # pairings unchanged
    lines = split_lines(out)
    by_rank = {int(line[4:8]): line for line in lines if line.startswith("001")}
    for (w, b), (cw, cb) in results.items():
        assert by_rank[w][91 + 20:91 + 28] == f"{b:4d} w {cw}"
        assert by_rank[b][91 + 20:91 + 28] == f"{w:4d} b {cb}"
    assert {c for c, _ in results.values()} == {"1", "0", "=", "+"}
    # every other line is unchanged
    before = split_lines(text)
    changed = [i for i, (x, y) in enumerate(zip(before, lines, strict=True)) if x != y]
    assert len(changed) == 10
    # a TRF that has no round 3 column yet gets the whole block
    bare = trf_text(swiss(10, 2, next_round=False))
    written = write_trf_results(bare, 3, results)
    assert read_trf(written, 3).games == rf.games
    assert trf_result_codes("*") is None


def test_read_round_tells_the_format() -> None:
    players = swiss(4, 0)
    trf = trf_text(players).encode("latin-1")
    assert read_round(trf, 1).format == "trf"
    assert read_round(b"2\n1 2\n3 4\n", 1, players_trf=trf).format == "pairing-engine"
    assert read_round(b"white,black\nA,B\n", 1).format == "csv"
    assert read_round(b"white,black\nA,\xff\n", 1).games[0].black.name == "\xff"  # Latin-1


def test_utf8_and_latin1_names() -> None:
    players = [TrfPlayer(rank=1, name="Müller, Jürgen", rounds=[(2, "w", " ")]),
               TrfPlayer(rank=2, name="Øvergård, Åse", rounds=[(1, "b", " ")])]
    text = trf_text(players)
    for encoding in ("utf-8", "latin-1"):
        rf = read_round(text.encode(encoding), 1)
        assert (rf.games[0].white.name, rf.games[0].black.name) == ("Müller, Jürgen", "Øvergård, Åse")
