"""Tournament files: a round's pairings in (FIDE TRF, pairing-engine output, CSV/TSV), results out.

Theory of operation
-------------------
Pure text in, pure text out: no files are opened here (the caller reads the bytes), no clock
is read. Facts about the formats are those of ``../shared/docs/tournament-files.md``.

Reading is **all or nothing**: every line is checked before anything is returned, and the
first problem raises :class:`TournamentFileError` naming the line (1-based), the column (1-based
character position, or the CSV column number) and the field. The caller sends nothing unless
the whole file is good.

* :func:`read_trf` reads the ``001`` player lines and one round's columns of a TRF (TRF-16 and
  TRF-2026; CR, LF or CRLF line ends; Latin-1 or UTF-8; ``###`` comments; other records
  skipped). A game is a pair of players who name each other as opponents with opposite
  colours; a contradiction is an error. ``0000`` (or blanks) with a letter is a bye; an opponent
  with colour ``-`` (a forfeit decided before the round, ``+``/``-``) is no board game either; a
  player with a blank round column (withdrawn, or not paired) is listed as not paired.
* :func:`read_pairing_engine` reads JaVaFo/bbpPairings output (``N``, then ``W B`` starting
  ranks, ``0`` for the bye); the players come from a TRF. The order of the lines is the board
  order.
* :func:`read_csv` reads a CSV/TSV pairing list with a header row (board, white, black; optional
  ratings, FIDE ids, round).

Board numbers
    CSV and pairing-engine files give them. TRF has none, so :data:`TRF_BOARD_RULE` applies:
    games are ordered by the higher score (before the round) of the two players, then by the
    lower score, then by the best (lowest) starting rank in the game; boards are numbered 1, 2,
    ... in that order. That is the common Swiss convention (highest scores first); the arbiter
    can reassign boards with ``--map`` or on the tablet.

Results
    :func:`write_trf_results` fills in one round's result column (``1``, ``=``, ``0``, forfeits
    ``+``/``-``) on both players' lines, leaving every other byte as it was (line ends
    included); :func:`results_csv` writes the same as CSV.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from boardd.core.errors import BoarddError

__all__ = [
    "TRF_BOARD_RULE",
    "Bye",
    "Pairing",
    "Player",
    "RoundFile",
    "TournamentFileError",
    "decode",
    "describe",
    "read_csv",
    "read_pairing_engine",
    "read_round",
    "read_trf",
    "results_csv",
    "split_lines",
    "trf_players",
    "trf_result_codes",
    "write_trf_results",
]

TRF_BOARD_RULE = ("boards ordered by the higher score before the round of the two players, then the lower "
                  "score, then the best (lowest) starting rank in the game")

#: TRF result codes (either case).
_RESULT_CODES = frozenset("1=0+-WDLHFUZ")
_BYE_CODES = frozenset("HFUZ")
_POINTS = {"1": 1.0, "+": 1.0, "W": 1.0, "F": 1.0, "U": 1.0, "=": 0.5, "D": 0.5, "H": 0.5}


class TournamentFileError(BoarddError, ValueError):
    """A tournament file is wrong; ``line`` and ``column`` are 1-based (0 when not about one)."""

    def __init__(self, message: str, *, line: int = 0, column: int = 0, field: str = "", source: str = "") -> None:
        where = []
        if source:
            where.append(source)
        if line:
            where.append(f"line {line}")
        if column:
            where.append(f"column {column}")
        if field:
            where.append(f"({field})")
        super().__init__((" ".join(where) + ": " if where else "") + message)
        self.line = line
        self.column = column
        self.field = field


@dataclass(frozen=True, slots=True, kw_only=True)
class Player:
    """A player: ``rank`` is the starting rank (0 when the file has none, e.g. a CSV)."""

    rank: int = 0
    name: str
    rating: int | None = None
    federation: str = ""
    fide_id: str = ""
    title: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Pairing:
    """One game of the round: board number, White, Black and the file line it came from."""

    board_no: int
    white: Player
    black: Player
    line: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Bye:
    """A player without a game this round: ``kind`` is the TRF letter (H, F, U, Z), ``+``/``-`` for a
    forfeit without opponent, or ``""`` when the file only says the player is not paired."""

    player: Player
    kind: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundFile:
    """What a file says about one round."""

    round: int
    games: tuple[Pairing, ...]
    byes: tuple[Bye, ...] = ()
    event: str = ""
    format: str = ""
    board_rule: str = ""
    players: Mapping[int, Player] = field(default_factory=dict)


# --- text helpers ---------------------------------------------------------------------------


def decode(data: bytes) -> str:
    """UTF-8 (with or without BOM) when it decodes, else Latin-1 (the two character sets TRF files use)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


_EOL = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines without their ends, whatever the ends (CR only, LF, CRLF)."""
    lines = _EOL.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _cols(line: str, first: int, last: int) -> str:
    """Columns *first*..*last* (1-based, inclusive) of *line*, blanks when the line is shorter."""
    return line[first - 1:last].ljust(last - first + 1)


# --- TRF ------------------------------------------------------------------------------------


def _round_column(round_no: int) -> int:
    """First column (1-based) of round *round_no*'s block in a ``001`` line."""
    return 92 + 10 * (round_no - 1)


@dataclass(slots=True)
class _TrfLine:
    line_no: int
    player: Player
    rounds: list[tuple[int, str, str]]  # (opponent or 0, colour, result) per round; colour/result '' when blank


def _trf_int(line: str, line_no: int, first: int, last: int, name: str, *, lo: int, hi: int,
             required: bool) -> int | None:
    raw = _cols(line, first, last).strip()
    if not raw:
        if required:
            raise TournamentFileError(f"{name} is missing", line=line_no, column=first, field=name)
        return None
    if not raw.isdigit() or not lo <= int(raw) <= hi:
        raise TournamentFileError(f"{name} must be a number {lo}..{hi}, got {raw!r}", line=line_no, column=first,
                                  field=name)
    return int(raw)


def _trf_player_line(line: str, line_no: int) -> _TrfLine:
    rank = _trf_int(line, line_no, 5, 8, "starting rank", lo=1, hi=9999, required=True)
    assert rank is not None
    name = _cols(line, 15, 47).strip()
    if not name:
        raise TournamentFileError("player name is missing", line=line_no, column=15, field="name")
    rating = _trf_int(line, line_no, 49, 52, "rating", lo=0, hi=4000, required=False)
    fide_id = _cols(line, 58, 68).strip()
    if fide_id and not fide_id.isdigit():
        raise TournamentFileError(f"FIDE id must be digits, got {fide_id!r}", line=line_no, column=58,
                                  field="FIDE id")
    if fide_id and int(fide_id) == 0:
        fide_id = ""
    player = Player(rank=rank, name=name, rating=rating or None, federation=_cols(line, 54, 56).strip(),
                    fide_id=fide_id, title=_cols(line, 11, 13).strip())
    rounds: list[tuple[int, str, str]] = []
    round_no = 1
    while _round_column(round_no) <= len(line):
        start = _round_column(round_no)
        block = _cols(line, start, start + 7)
        opp_raw, colour, result = block[0:4].strip(), block[5].strip(), block[7].strip()
        if not opp_raw and not colour and not result:
            rounds.append((0, "", ""))
            round_no += 1
            continue
        if opp_raw and not opp_raw.isdigit():
            raise TournamentFileError(f"round {round_no}: opponent must be a starting rank, got {opp_raw!r}",
                                      line=line_no, column=start, field=f"round {round_no} opponent")
        if colour.lower() not in {"w", "b", "-", ""}:
            raise TournamentFileError(f"round {round_no}: colour must be w, b or -, got {colour!r}",
                                      line=line_no, column=start + 5, field=f"round {round_no} colour")
        if result and result.upper() not in _RESULT_CODES:
            raise TournamentFileError(f"round {round_no}: result must be one of 1 = 0 + - W D L H F U Z, got "
                                      f"{result!r}", line=line_no, column=start + 7, field=f"round {round_no} result")
        rounds.append((int(opp_raw or "0"), colour.lower(), result.upper()))
        round_no += 1
    return _TrfLine(line_no, player, rounds)


def _trf_lines(text: str) -> tuple[dict[int, _TrfLine], str, str]:
    """The ``001`` lines by starting rank, the event name (``012``) and the encoded time control (``222``)."""
    players: dict[int, _TrfLine] = {}
    event = time_control = ""
    for line_no, line in enumerate(split_lines(text), start=1):
        if line.startswith("###") or not line.strip():
            continue
        code = line[:3]
        if code == "012":
            event = line[4:].strip()
        elif code == "222":
            time_control = line[4:].strip()
        elif code == "001":
            entry = _trf_player_line(line, line_no)
            if entry.player.rank in players:
                raise TournamentFileError(f"starting rank {entry.player.rank} already used on line "
                                          f"{players[entry.player.rank].line_no}", line=line_no, column=5,
                                          field="starting rank")
            players[entry.player.rank] = entry
    if not players:
        raise TournamentFileError("no player line (001) in the file")
    return players, event, time_control


def _score_before(entry: _TrfLine, round_no: int) -> float:
    return sum(_POINTS.get(result, 0.0) for _, _, result in entry.rounds[:round_no - 1])


def read_trf(text: str, round_no: int) -> RoundFile:
    """Round *round_no* of a TRF: its games (boards by :data:`TRF_BOARD_RULE`) and byes."""
    lines, event, _ = _trf_lines(text)
    if not any(len(e.rounds) >= round_no and e.rounds[round_no - 1] != (0, "", "") for e in lines.values()):
        raise TournamentFileError(f"round {round_no} is not in the file (no player line has its column "
                                  f"{_round_column(round_no)})", column=_round_column(round_no), field="round")
    games: list[tuple[_TrfLine, _TrfLine]] = []
    byes: list[Bye] = []
    start = _round_column(round_no)
    for rank in sorted(lines):
        entry = lines[rank]
        opp, colour, result = entry.rounds[round_no - 1] if len(entry.rounds) >= round_no else (0, "", "")
        if opp == 0 or colour == "-":
            # a bye, or a game not played on a board (a forfeit decided before the round: colour "-")
            byes.append(Bye(player=entry.player, kind=result if result in _BYE_CODES | {"+", "-"} else ""))
            continue
        other = lines.get(opp)
        if other is None:
            raise TournamentFileError(f"round {round_no}: opponent {opp} has no player line", line=entry.line_no,
                                      column=start, field=f"round {round_no} opponent")
        o_opp, o_colour, _ = other.rounds[round_no - 1] if len(other.rounds) >= round_no else (0, "", "")
        if o_opp != rank:
            raise TournamentFileError(f"round {round_no}: player {rank} plays {opp}, but player {opp}'s line "
                                      f"(line {other.line_no}) names {o_opp or 'no opponent'}", line=entry.line_no,
                                      column=start, field=f"round {round_no} opponent")
        if {colour, o_colour} != {"w", "b"}:
            raise TournamentFileError(f"round {round_no}: players {rank} and {opp} need colours w and b, got "
                                      f"{colour or 'blank'!r} and {o_colour or 'blank'!r}", line=entry.line_no,
                                      column=start + 5, field=f"round {round_no} colour")
        if colour == "w":
            games.append((entry, other))
    games.sort(key=lambda pair: (-max(_score_before(p, round_no) for p in pair),
                                 -min(_score_before(p, round_no) for p in pair),
                                 min(p.player.rank for p in pair)))
    pairings = tuple(Pairing(board_no=i, white=w.player, black=b.player, line=w.line_no)
                     for i, (w, b) in enumerate(games, start=1))
    return RoundFile(round=round_no, games=pairings, byes=tuple(byes), event=event, format="trf",
                     board_rule=TRF_BOARD_RULE, players={r: e.player for r, e in lines.items()})


def trf_players(text: str) -> dict[int, Player]:
    """The players of a TRF by starting rank (every ``001`` line checked)."""
    lines, _, _ = _trf_lines(text)
    return {rank: entry.player for rank, entry in lines.items()}


# --- pairing-engine output ------------------------------------------------------------------


def read_pairing_engine(text: str, round_no: int, players: Mapping[int, Player], *, event: str = "") -> RoundFile:
    """JaVaFo/bbpPairings output: the first line N, then N lines ``W B``; the line order is the board order."""
    numbered = [(i, line.strip()) for i, line in enumerate(split_lines(text), start=1) if line.strip()]
    if not numbered:
        raise TournamentFileError("empty pairing file", line=1, column=1, field="number of pairs")
    first_no, first = numbered[0]
    if not first.isdigit():
        raise TournamentFileError(f"the first line must be the number of pairs, got {first!r}", line=first_no,
                                  column=1, field="number of pairs")
    count = int(first)
    rows = numbered[1:]
    if len(rows) != count:
        line = rows[-1][0] + 1 if rows else first_no + 1
        raise TournamentFileError(f"the first line announces {count} pairs, the file has {len(rows)}",
                                  line=line if len(rows) < count else rows[count][0], column=1, field="pair")
    games: list[Pairing] = []
    byes: list[Bye] = []
    seen: dict[int, int] = {}
    for line_no, row in rows:
        parts = row.split()
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise TournamentFileError(f"expected 'white black' starting ranks, got {row!r}", line=line_no, column=1,
                                      field="pair")
        ranks = [int(p) for p in parts]
        for index, rank in enumerate(ranks):
            column = 1 if index == 0 else row.index(parts[1], len(parts[0])) + 1
            name = "white" if index == 0 else "black"
            if rank == 0 and index == 0:
                raise TournamentFileError("White cannot be 0 (only Black is 0, for the bye)", line=line_no,
                                          column=column, field=name)
            if rank == 0:
                continue
            if rank not in players:
                raise TournamentFileError(f"starting rank {rank} is not a player of the tournament file",
                                          line=line_no, column=column, field=name)
            if rank in seen:
                raise TournamentFileError(f"player {rank} is already paired on line {seen[rank]}", line=line_no,
                                          column=column, field=name)
            seen[rank] = line_no
        if ranks[1] == 0:
            byes.append(Bye(player=players[ranks[0]], kind="U"))
        else:
            games.append(Pairing(board_no=len(games) + 1, white=players[ranks[0]], black=players[ranks[1]],
                                 line=line_no))
    return RoundFile(round=round_no, games=tuple(games), byes=tuple(byes), event=event, format="pairing-engine",
                     board_rule="boards in the order of the pairing engine's lines", players=dict(players))


# --- CSV / TSV ------------------------------------------------------------------------------

_CSV_FIELDS: dict[str, tuple[str, ...]] = {
    "board": ("board", "bo", "brd", "boardno", "boardnumber", "table", "tableno", "no"),
    "round": ("round", "rd", "rnd"),
    "white": ("white", "whitename", "whiteplayer", "w"),
    "black": ("black", "blackname", "blackplayer", "b"),
    "white_rating": ("whiterating", "whiteelo", "welo", "wrating", "ratingwhite", "elowhite", "whitertg"),
    "black_rating": ("blackrating", "blackelo", "belo", "brating", "ratingblack", "eloblack", "blackrtg"),
    "white_fide_id": ("whitefideid", "wfideid", "whiteid", "fideidwhite", "whitefide"),
    "black_fide_id": ("blackfideid", "bfideid", "blackid", "fideidblack", "blackfide"),
    "white_title": ("whitetitle", "wtitle"),
    "black_title": ("blacktitle", "btitle"),
}
_CSV_ALIASES = {alias: name for name, aliases in _CSV_FIELDS.items() for alias in aliases}
_BYE_NAMES = frozenset({"", "bye", "-", "---", "(bye)", "spielfrei", "exempt"})


def _csv_rating(value: str, line: int, column: int, name: str) -> int | None:
    value = value.strip()
    if not value or value == "0":
        return None
    if not value.isdigit() or not 0 < int(value) <= 4000:
        raise TournamentFileError(f"rating must be a number 1..4000, got {value!r}", line=line, column=column,
                                  field=name)
    return int(value)


def _csv_fide_id(value: str, line: int, column: int, name: str) -> str:
    value = value.strip()
    if value and not value.isdigit():
        raise TournamentFileError(f"FIDE id must be digits, got {value!r}", line=line, column=column, field=name)
    return "" if not value or int(value) == 0 else value


def read_csv(text: str, round_no: int) -> RoundFile:
    """A CSV/TSV pairing list with a header row; the delimiter (tab, ``;`` or ``,``) is read from the header.

    Rows whose ``round`` column names another round are skipped; a row whose Black is empty or
    ``bye`` is a bye.
    """
    lines = split_lines(text)
    header_index = next((i for i, line in enumerate(lines) if line.strip()), None)
    if header_index is None:
        raise TournamentFileError("empty file", line=1, column=1, field="header")
    header_line = lines[header_index]
    delimiter = "\t" if "\t" in header_line else ";" if header_line.count(";") > header_line.count(",") else ","
    rows = list(csv.reader(lines, delimiter=delimiter))
    header = rows[header_index]
    columns: dict[str, int] = {}
    for index, raw in enumerate(header):
        key = re.sub(r"[^a-z]", "", raw.lower())
        name = _CSV_ALIASES.get(key)
        if name is None:
            continue  # result, points and other columns a pairing program adds
        if name in columns:
            raise TournamentFileError(f"two columns mean {name!r}", line=header_index + 1, column=index + 1,
                                      field=raw.strip())
        columns[name] = index
    for required in ("white", "black"):
        if required not in columns:
            raise TournamentFileError(f"no {required!r} column in the header (found: {', '.join(header)})",
                                      line=header_index + 1, column=1, field="header")
    games: list[Pairing] = []
    byes: list[Bye] = []
    boards: dict[int, int] = {}
    for index in range(header_index + 1, len(rows)):
        row = rows[index]
        line = index + 1
        if not any(cell.strip() for cell in row):
            continue

        def cell(name: str, row: list[str] = row) -> tuple[str, int]:
            col = columns.get(name)
            if col is None:
                return "", 0
            return (row[col].strip() if col < len(row) else ""), col + 1

        rnd, rnd_col = cell("round")
        if rnd:
            if not re.fullmatch(r"\d+(\.\d+)?", rnd):
                raise TournamentFileError(f"round must be a number, got {rnd!r}", line=line, column=rnd_col,
                                          field="round")
            if int(rnd.split(".")[0]) != round_no:
                continue
        white, white_col = cell("white")
        black, _ = cell("black")
        if not white:
            raise TournamentFileError("White's name is empty", line=line, column=white_col, field="white")
        wp = Player(name=white, rating=_csv_rating(cell("white_rating")[0], line, cell("white_rating")[1],
                                                   "white rating"),
                    fide_id=_csv_fide_id(cell("white_fide_id")[0], line, cell("white_fide_id")[1], "white FIDE id"),
                    title=cell("white_title")[0])
        if black.lower() in _BYE_NAMES:
            byes.append(Bye(player=wp, kind=""))
            continue
        bp = Player(name=black, rating=_csv_rating(cell("black_rating")[0], line, cell("black_rating")[1],
                                                   "black rating"),
                    fide_id=_csv_fide_id(cell("black_fide_id")[0], line, cell("black_fide_id")[1], "black FIDE id"),
                    title=cell("black_title")[0])
        board_raw, board_col = cell("board")
        if "board" in columns:
            if not board_raw.isdigit() or not 1 <= int(board_raw) <= 10000:
                raise TournamentFileError(f"board must be a number 1..10000, got {board_raw!r}", line=line,
                                          column=board_col, field="board")
            board_no = int(board_raw)
        else:
            board_no = len(games) + 1
        if board_no in boards:
            raise TournamentFileError(f"board {board_no} is already used on line {boards[board_no]}", line=line,
                                      column=board_col or 1, field="board")
        boards[board_no] = line
        games.append(Pairing(board_no=board_no, white=wp, black=bp, line=line))
    if not games:
        raise TournamentFileError(f"no game of round {round_no} in the file", line=header_index + 1, column=1,
                                  field="round")
    games.sort(key=lambda g: g.board_no)
    rule = "board numbers from the file" if "board" in columns else "boards in the order of the file's rows"
    return RoundFile(round=round_no, games=tuple(games), byes=tuple(byes), format="csv", board_rule=rule)


def read_round(data: bytes, round_no: int, *, players_trf: bytes | None = None, source: str = "") -> RoundFile:
    """Any of the three formats, told by its content; *players_trf* gives the players of pairing-engine output."""
    if round_no < 1:
        raise TournamentFileError(f"round must be 1 or more, got {round_no}", field="round", source=source)
    text = decode(data)
    try:
        first = next((line.strip() for line in split_lines(text) if line.strip()), "")
        if any(line.startswith("001") for line in split_lines(text)) and not first.isdigit():
            return read_trf(text, round_no)
        if first.isdigit():
            if players_trf is None:
                raise TournamentFileError("pairing-engine output names players by starting rank: give the "
                                          "tournament's TRF with --players", line=1, column=1, field="players")
            lines, event, _ = _trf_lines(decode(players_trf))
            return read_pairing_engine(text, round_no, {r: e.player for r, e in lines.items()}, event=event)
        return read_csv(text, round_no)
    except TournamentFileError as exc:
        if source and not str(exc).startswith(source):
            raise TournamentFileError(str(exc), source=source) from None
        raise


# --- results out ----------------------------------------------------------------------------


def trf_result_codes(result: str, termination: str | None = None) -> tuple[str, str] | None:
    """The TRF result codes (White's, Black's) of a PGN result; forfeits (termination containing
    ``forfeit``) give ``+``/``-``. ``None`` for a game still playing (``*``)."""
    forfeit = "forfeit" in (termination or "").lower()
    if result == "1-0":
        return ("+", "-") if forfeit else ("1", "0")
    if result == "0-1":
        return ("-", "+") if forfeit else ("0", "1")
    if result == "1/2-1/2":
        return ("=", "=")
    return None


def write_trf_results(text: str, round_no: int, results: Mapping[tuple[int, int], tuple[str, str]]) -> str:
    """*text* with round *round_no*'s block written for every game in *results*.

    *results* maps (White's starting rank, Black's) to their result codes. The block
    (``OOOO c r``) is written whole on both lines, so a TRF without the round's columns gets them.
    Every other character and every line end stays as it was.
    """
    pieces = _EOL.split(text)
    ends = _EOL.findall(text)
    start = _round_column(round_no)
    blocks: dict[int, str] = {}
    for (white, black), (w_code, b_code) in results.items():
        blocks[white] = f"{black:4d} w {w_code}"
        blocks[black] = f"{white:4d} b {b_code}"
    done: set[int] = set()
    for index, line in enumerate(pieces):
        if not line.startswith("001"):
            continue
        raw = _cols(line, 5, 8).strip()
        if not raw.isdigit() or int(raw) not in blocks:
            continue
        rank = int(raw)
        padded = line.ljust(start - 1)
        rest = padded[start - 1 + 8:]
        pieces[index] = padded[:start - 1] + blocks[rank] + rest
        done.add(rank)
    missing = sorted(set(blocks) - done)
    if missing:
        raise TournamentFileError(f"no player line for starting rank(s) {', '.join(map(str, missing))}")
    out = io.StringIO()
    for index, line in enumerate(pieces):
        out.write(line)
        if index < len(ends):
            out.write(ends[index])
    return out.getvalue()


def results_csv(round_no: int, rows: Iterable[tuple[Pairing, str, str]]) -> str:
    """CSV for a pairing program: round, board, white, black, result (``1-0``, ``½``, ``+/-`` ...), status."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["round", "board", "white", "white_fide_id", "black", "black_fide_id", "result", "termination"])
    for pairing, result, termination in rows:
        writer.writerow([round_no, pairing.board_no, pairing.white.name, pairing.white.fide_id, pairing.black.name,
                         pairing.black.fide_id, result, termination])
    return out.getvalue()


def describe(pairing: Pairing) -> str:
    """``White (2650) - Black (2600)`` for the dry run."""
    def one(p: Player) -> str:
        rating = f" ({p.rating})" if p.rating else ""
        return f"{p.name}{rating}"
    return f"{one(pairing.white)} - {one(pairing.black)}"

