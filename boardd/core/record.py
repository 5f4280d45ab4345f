"""The game record as PGN, with clock annotations and the tags broadcasts use.

Theory of operation
-------------------
:func:`game_pgn` turns a :class:`boardd.core.outputs.GameState` into PGN text for the
``{root}/pgn`` topic, the relay's files and the lichess push API. The movetext is
built with python-chess (``chess.pgn``), so SAN, move numbers, escaping of tag
values and line wrapping are python-chess's; only the clock values and the
representation of illegal moves are ours.

Tags
    The Seven Tag Roster (``Event``, ``Site``, ``Date``, ``Round``, ``White``,
    ``Black``, ``Result``), then ``Board``, ``GameId`` (when the game has an id:
    lichess settles game identity on it, mqtt-broadcast-systemd.md §4.2),
    ``TimeControl`` (PGN form), ``Termination`` (when known) and, where needed,
    ``Variant "Chess960"``, ``SetUp "1"`` and ``FEN`` (a Chess960 game has all three,
    even from the standard array, position 518). ``Round`` is ``"r.b"``
    (round 3, board 12 gives ``"3.12"``) as DGT LiveChess writes it, and lila
    reads the board number from either ``Round`` or ``Board``.
    ``WhiteClock`` and ``BlackClock`` (``"01:23:54"``, DGT LiveChess's form: hours
    padded, whole seconds rounded down) carry the state's current clock when it
    is known: lila applies them to the last moves, so viewers get a live clock
    for the player to move (lila#14843, mqtt-broadcast-systemd.md §4.2).

Clocks
    Every move carries ``[%clk h:mm:ss]``: the mover's remaining time after the
    move, when known, and ``[%emt h:mm:ss]``: the time the mover used, when
    known. :func:`format_clock` renders them the way lichess writes them (hours
    not padded, ``[%clk 1:01:27]``); DGT LiveChess pads the hours
    (``00:15:19``) and every parser (lila, python-chess) reads both. Values are
    **rounded down** to whole seconds, the resolution of a DGT clock over serial,
    so a clock never shows more time than the player had; ``59.9996`` s is
    ``0:00:59``, never python-chess's ``0:00:60``. Below ten seconds the tenths
    are kept (``0:00:04.3``, rounded down, ``.0`` dropped): this is the form
    chess.com writes and lila reads (``H:MM:SS.f``), and it keeps "0.4 s left"
    apart from a fallen flag (``0:00:00``).

Illegal moves that stood
    A move with ``MoveRecord.legal == False`` (an illegal move nobody corrected,
    rules-spec R22) has no SAN, and every move after it is played from a
    position no legal PGN can reach. lila rejects such movetext ("Cannot parse
    moves") and python-chess drops the rest of the game. So the movetext stops
    before the first such move, and the rest of the record goes, in the
    notation of rules-spec §8 (``3. Bf1-c5 (illegal)``), into a comment on the
    last legal move (or before the movetext when the very first move was
    illegal), ending with the FEN of the physical position. The PGN stays
    parseable by lichess and python-chess; viewers see the game up to the last
    legal move, and the full record is in the comment and in the ``state``
    topic. The comment never contains ``[%clk``, so no clock of a later move is
    mistaken for the clock of the last legal one.

Cost
    The daemon renders the PGN after every change of the record, so :func:`game_pgn` does not
    rebuild it: the movetext of a game's legal prefix is kept (:class:`_Movetext`, a few recent
    games in a small cache) as python-chess's exporter writes it (line wrapping at 80 columns,
    move numbers after comments), with the exporter's state before and after each move. A render
    writes only the moves added since the last one (one SAN each); a retraction, a reinstatement
    or a record whose clocks changed goes back to the last unchanged move and writes on from
    there; a move written again with the same UCI and SAN (its clocks filled in at its
    completion) takes its move and SAN from the redo list of the truncation, not from
    python-chess. The tags are cached on what they depend on, the tail comment after an illegal
    move that stood item by item, and each movetext line escaped for JSON once
    (:func:`escaped_pgn`). What is left per render is joining the lines into the text, which
    is as long as the game. :func:`rebuild_pgn` writes the same text from the start through
    python-chess's exporter; tests compare the two over many games with retractions, illegal
    moves that stood, reinstatements and game ends.

Everything here is pure: no I/O, no clock reads.
"""

from __future__ import annotations

import functools
import logging
import math
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import chess
import chess.pgn

from boardd.core.outputs import GameState, MoveRecord

__all__ = ["archive_pgn", "clock_tag", "comment_token", "escaped_pgn", "format_clock", "game_pgn", "pgn_and_check",
           "pgn_game", "pgn_round", "pgn_termination", "pgn_time_control", "rebuild_pgn", "shared_prefix",
           "write_token"]

_T = TypeVar("_T")

_LOGGER = logging.getLogger(__name__)

#: Below this many seconds, clocks keep their tenths (see the module docstring).
TENTHS_BELOW_S = 10.0

#: Absorbs float noise (``930 - 11.000000001``) before rounding down.
_EPSILON = 1e-6

#: One field of a PGN TimeControl tag (PGN standard 9.6.1, plus the FIDE-style
#: ``moves/seconds+increment`` form that lichess and DGT accept).
_TC_FIELD = re.compile(r"^(?:\d+/)?\d+(?:\.\d+)?(?:\+\d+(?:\.\d+)?)?$|^\*\d+$")

#: rules-spec §5.1 game-end codes and other engine terminations -> PGN ``Termination`` values.
_TERMINATIONS = {
    "GAME_END_CHECKMATE": "normal",
    "GAME_END_STALEMATE": "normal",
    "GAME_END_DEAD_POSITION": "normal",
    "GAME_END_FIVEFOLD": "normal",
    "GAME_END_75_MOVES": "normal",
    "FLAG_FALL": "time forfeit",
    "BOTH_FLAGS_FALLEN": "time forfeit",
    "ILLEGAL_MOVE_LIMIT_REACHED": "rules infraction",
    "ILLEGAL_POSITION_PERSISTS": "rules infraction",
}

#: Free-text terminations an arbiter enters (``set-result``), lower case -> PGN ``Termination``.
_TERMINATION_WORDS = {
    "resignation": "normal",
    "resigned": "normal",
    "agreement": "normal",
    "draw agreed": "normal",
    "mutual agreement": "normal",
    "checkmate": "normal",
    "stalemate": "normal",
    "flag": "time forfeit",
    "flag fall": "time forfeit",
    "time": "time forfeit",
    "timeout": "time forfeit",
    "forfeit": "abandoned",
    "illegal move": "rules infraction",
    "illegal moves": "rules infraction",
}


def _tag(value: str, default: str = "?") -> str:
    """A tag value on one line: control characters and line separators become spaces (a newline
    inside a tag would end the PGN tag pair)."""
    cleaned = "".join(" " if unicodedata.category(c) in {"Cc", "Zl", "Zp"} else c for c in value).strip()
    return cleaned or default


def format_clock(seconds: float) -> str:
    """Render a clock or elapsed time as ``h:mm:ss`` for ``[%clk]``/``[%emt]``.

    Rounded down; tenths kept below :data:`TENTHS_BELOW_S`; negative or
    non-finite values are ``0:00:00``.

    >>> format_clock(5400)
    '1:30:00'
    >>> format_clock(919.99)
    '0:15:19'
    >>> format_clock(4.37)
    '0:00:04.3'
    """
    if not math.isfinite(seconds) or seconds <= 0:
        return "0:00:00"
    tenths = math.floor(seconds * 10 + _EPSILON)
    whole, tenth = divmod(tenths, 10)
    fraction = f".{tenth}" if tenth and seconds < TENTHS_BELOW_S else ""
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}{fraction}"


def clock_tag(seconds: float) -> str:
    """Render a clock for the ``WhiteClock``/``BlackClock`` tags: ``hh:mm:ss``, rounded down.

    The form of DGT LiveChess's tags (``[WhiteClock "00:33:51"]``); no tenths, as
    no tag carries them. Negative or non-finite values are ``00:00:00``.

    >>> clock_tag(5400)
    '01:30:00'
    >>> clock_tag(4.99)
    '00:00:04'
    """
    if not math.isfinite(seconds) or seconds <= 0:
        return "00:00:00"
    whole = math.floor(seconds + _EPSILON)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}"


def pgn_round(round_: str, board_no: int | None) -> str:
    """The ``Round`` tag: ``"r.b"`` when both are known, else the round as given.

    >>> pgn_round("3", 12)
    '3.12'
    >>> pgn_round("3.12", 12)
    '3.12'
    >>> pgn_round("?", 12)
    '?'
    """
    round_ = round_.strip() or "?"
    if board_no is None or round_ in {"?", "-"} or "." in round_:
        return round_
    return f"{round_}.{board_no}"


@functools.lru_cache(maxsize=64)
def pgn_time_control(time_control: str) -> str:
    """The PGN ``TimeControl`` tag for a :class:`~boardd.core.events.GameInfo` time control.

    A value in PGN form (``"40/5400+30:1800+30"``, ``"900+10"``, ``"?"``, ``"-"``)
    is kept. Anything else, such as boardd's delay forms (``"5400d5"``, see
    :mod:`boardd.core.clock`), which PGN cannot express, becomes ``"?"`` (logged once
    per value), so a malformed tag never reaches the broadcast.
    """
    text = time_control.strip()
    if text in {"?", "-"} or (text and all(_TC_FIELD.fullmatch(part) for part in text.split(":"))):
        return text
    _LOGGER.warning("time control %r has no PGN form; writing TimeControl \"?\"", time_control)
    return "?"


def pgn_termination(termination: str | None) -> str | None:
    """The PGN ``Termination`` tag value for the engine's termination, or None when unknown.

    rules-spec codes and common words map to the PGN standard's values (``normal``,
    ``time forfeit``, ``rules infraction``, ``abandoned``); other text is kept as given.
    """
    if not termination:
        return None
    if termination in _TERMINATIONS:
        return _TERMINATIONS[termination]
    return _TERMINATION_WORDS.get(termination.strip().lower(), termination)


@functools.lru_cache(maxsize=64)
def _start_board_cached(start_fen: str | None, chess960: bool) -> chess.Board | None:
    """The start position (shared: never modified), or None when python-chess refuses the FEN."""
    try:
        return chess.Board(start_fen or chess.STARTING_FEN, chess960=chess960)
    except ValueError:
        return None


def _start_board(state: GameState) -> chess.Board | None:
    """The starting position, or None when ``start_fen`` is not a position python-chess accepts."""
    try:
        return chess.Board(state.start_fen or chess.STARTING_FEN, chess960=state.chess960)
    except ValueError:
        _LOGGER.error("game %s: start FEN %r is invalid; all moves go to a comment", state.game_id,
                      state.start_fen)
        return None


#: What python-chess's SAN (and legality) of a move depends on in the position before it: the pieces, the side to
#: move, the castling rights, the e.p. square, the Chess960 flag and the board's class (not the move counters).
PositionKey = tuple[object, ...]


def position_key(board: chess.Board) -> PositionKey:
    """The position *board* is in, as far as a move's legality and SAN go (see :data:`PositionKey`)."""
    occupied_co = board.occupied_co
    return (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
            occupied_co[chess.WHITE], occupied_co[chess.BLACK], board.promoted, board.turn, board.castling_rights,
            board.ep_square, board.chess960, type(board))


#: Moves the engine made, by (the position before, the move's UCI): the move as python-chess pushes it and its SAN
#: with the check suffix, the very values :func:`_parse_move` and ``board.san_and_push`` give there. The movetext
#: takes a move's SAN from here instead of working it out again (issue 12: once when the move is made). Cleared
#: whole when full (a miss only costs the python-chess path); read and written whole entries (threads may share it).
_MADE: dict[tuple[PositionKey, str], tuple[chess.Move, str]] = {}
_MADE_KEEP = 4096


def note_made_move(before: PositionKey, uci: str, move: chess.Move, san: str) -> None:
    """Keep the SAN of a legal *move* (UCI *uci*) made in the position *before*: python-chess's ``board.san(move)``
    there, check suffix included (the caller vouches for both)."""
    if len(_MADE) >= _MADE_KEEP:
        _MADE.clear()
    _MADE[(before, uci)] = (move, san)


def _parse_move(board: chess.Board, record: MoveRecord) -> chess.Move | None:
    """The legal move of *record* on *board*, by UCI, then by SAN; None when neither works."""
    try:
        return board.parse_uci(record.uci)
    except ValueError:
        pass
    try:
        return board.parse_san(record.san)
    except ValueError:
        return None


#: The comment on a recovered move by what made it missed (``MoveRecord.recovered_reason``, the ``MOVES_RECOVERED``
#: reasons of :mod:`boardd.core.engine.downtime`, whose gap texts say the same); not known: a restart's wording.
RECOVERED_TEXT = {"daemon restarted": "recovered after downtime",
                  "board link down": "recovered after the board link was down",
                  "missed updates": "recovered after missed board updates"}


def _annotations(record: MoveRecord) -> str:
    """``[%clk …] [%emt …]`` for one move (the mover's clock after the move)."""
    remaining = record.clock_white if record.side == chess.WHITE else record.clock_black
    parts = []
    if remaining is not None:
        parts.append(f"[%clk {format_clock(remaining)}]")
    if record.emt is not None:
        parts.append(f"[%emt {format_clock(record.emt)}]")
    if record.recovered:
        what = RECOVERED_TEXT.get(record.recovered_reason, RECOVERED_TEXT["daemon restarted"])
        parts.append(f"{what} ({record.recovered})")
    return " ".join(parts)


def _move_number(start: chess.Board | None, record: MoveRecord, index: int) -> str:
    """``"12."`` or ``"12..."`` for the *index*-th (0-based) move of the record."""
    fullmove = start.fullmove_number if start is not None else 1
    offset = 1 if start is not None and start.turn == chess.BLACK else 0
    number = fullmove + (index + offset) // 2
    return f"{number}." if record.side == chess.WHITE else f"{number}..."


def _tail_item(start: chess.Board | None, record: MoveRecord, index: int) -> str:
    """One move of the tail comment: ``"3. Bf1-c5 (illegal, f1c5) clk 0:14:58"``.

    Numbered from the position it leaves: after a gap (several plies in one entry) the count of entries is not.
    """
    number = _move_number(start, record, index)
    try:
        after = int(record.fen_after.split()[5])
    except (IndexError, ValueError):
        after = None
    if after is not None:
        number = f"{after}." if record.side == chess.WHITE else f"{after - 1}..."
    text = f"{number} {record.san or record.uci}"
    kind = "gap" if record.recovered == "gap" else "out of turn" if record.out_of_turn else "illegal"
    notes = ([kind] if not record.legal else []) + ([record.uci] if record.uci not in {"", "0000"} else [])
    if notes:
        text += f" ({', '.join(notes)})"
    remaining = record.clock_white if record.side == chess.WHITE else record.clock_black
    if remaining is not None:
        text += f" clk {format_clock(remaining)}"
    if record.emt is not None:
        text += f" emt {format_clock(record.emt)}"
    return text


def _tail_reason(record: MoveRecord) -> str:
    """Why the movetext stops at *record*: a gap of moves not seen, an illegal move that stood, or neither."""
    if record.recovered == "gap":
        return "moves were missed that the board cannot tell (a gap, for the arbiter's fill-gap)"
    if record.out_of_turn:
        return "a move made on the opponent's turn stood"
    return "an illegal move stood" if not record.legal else "a move could not be replayed"


def _tail_comment(state: GameState, start: chess.Board | None, first: int) -> str:
    """The record from move *first* (0-based) on, for a PGN comment (see the module docstring)."""
    items = [_tail_item(start, state.moves[index], index) for index in range(first, len(state.moves))]
    first_record = state.moves[first]
    reason = _tail_reason(first_record)
    comment = (
        f"boardd: {reason} at ply {first_record.ply}; the record continues from the physical position: "
        + "; ".join(items)
        + f". Position: {state.moves[-1].fen_after}"
    )
    # Braces would end the comment early.
    return _tag(comment.replace("{", "(").replace("}", ")"))


@dataclass(frozen=True, slots=True)
class _Replayed:
    """The record replayed on a board: the legal prefix with its SAN, where it stopped, the board after it."""

    moves: tuple[tuple[chess.Move, str], ...]
    stopped: int | None
    board: chess.Board | None


def _replay(state: GameState, start: chess.Board | None) -> _Replayed:
    """The legal prefix of *state*'s record (see "Illegal moves that stood"), replayed from the start."""
    moves: list[tuple[chess.Move, str]] = []
    board = start.copy(stack=False) if start is not None else None
    stopped: int | None = None
    for index, record in enumerate(state.moves):
        move = _parse_move(board, record) if board is not None and record.legal else None
        if move is None or board is None:
            stopped = index
            break
        moves.append((move, board.san_and_push(move)))
    return _Replayed(moves=tuple(moves), stopped=stopped, board=board if stopped is None else None)


class _Exporter(chess.pgn.StringExporter):
    """python-chess's exporter, with the SAN already computed by :func:`_replay` (the costly part)."""

    def __init__(self, sans: list[str]) -> None:
        super().__init__(headers=True, variations=False, comments=True)
        self._sans = sans
        self._next = 0

    def visit_move(self, board: chess.Board, move: chess.Move) -> None:
        """Write the move number and the SAN, as :class:`chess.pgn.StringExporter` does."""
        if self.variations or not self.variation_depth:
            if board.turn == chess.WHITE:
                self.write_token(f"{board.fullmove_number}. ")
            elif self.force_movenumber:
                self.write_token(f"{board.fullmove_number}... ")
            self.write_token(self._sans[self._next] + " ")
            self._next += 1
            self.force_movenumber = False


def _build(state: GameState) -> tuple[chess.pgn.Game, list[str]]:
    game = chess.pgn.Game()
    headers = game.headers
    headers["Event"] = _tag(state.event)
    headers["Site"] = _tag(state.site)
    headers["Date"] = _tag(state.date, "????.??.??")
    headers["Round"] = pgn_round(_tag(state.round), state.board_no)
    headers["White"] = _tag(state.white)
    headers["Black"] = _tag(state.black)
    headers["Result"] = state.result if state.result in {"1-0", "0-1", "1/2-1/2"} else "*"
    if state.board_no is not None:
        headers["Board"] = str(state.board_no)
    if _tag(state.game_id, ""):
        headers["GameId"] = _tag(state.game_id)
    headers["TimeControl"] = pgn_time_control(state.time_control)
    termination = pgn_termination(state.termination)
    if termination is not None:
        headers["Termination"] = _tag(termination)
    if state.clock.white is not None:
        headers["WhiteClock"] = clock_tag(state.clock.white)
    if state.clock.black is not None:
        headers["BlackClock"] = clock_tag(state.clock.black)

    start = _start_board(state)
    if start is not None:
        game.setup(start)
        if state.chess960:
            if "FEN" not in headers:
                # the standard array (position 518): python-chess leaves the tags out, but a Chess960 game
                # states its start position (lichess reads the castling as Chess960's only with a FEN)
                del headers["Variant"]
                headers["FEN"] = start.fen()
                headers["SetUp"] = "1"
            headers["Variant"] = "Chess960"
    elif state.start_fen:
        headers["SetUp"] = "1"
        headers["FEN"] = state.start_fen

    replayed = _replay(state, start)
    node: chess.pgn.GameNode = game
    for record, (move, _) in zip(state.moves, replayed.moves, strict=False):
        node = node.add_variation(move, comment=_annotations(record))
    if replayed.stopped is not None:
        tail = _tail_comment(state, start, replayed.stopped)
        node.comment = f"{node.comment} {tail}".strip()
    return game, [san for _, san in replayed.moves]


def pgn_game(state: GameState) -> chess.pgn.Game:
    """The game record as a python-chess :class:`chess.pgn.Game` (tags, moves, clock comments).

    Never raises for a record python-chess cannot replay: see "Illegal moves that
    stood" in the module docstring.
    """
    return _build(state)[0]


def game_pgn(state: GameState) -> str:
    """PGN text of the current game, ending with a newline.

    Byte for byte what python-chess's :class:`chess.pgn.StringExporter` writes for :func:`pgn_game`
    (:func:`rebuild_pgn`), built incrementally (see "Cost" in the module docstring).

    Example (1.e4 with clocks, round 3 board 12)::

        [Event "..."]
        ...
        [Round "3.12"]
        ...
        1. e4 { [%clk 1:29:58] [%emt 0:00:02] } *
    """
    return pgn_and_check(state)[0]


def pgn_and_check(state: GameState) -> tuple[str, str | None]:
    """:func:`game_pgn` and, when the movetext tells it, the check mark of the position after the last move
    (``"#"``, ``"+"``, ``""`` for neither; None when unknown: see :meth:`_Movetext.check_mark`)."""
    text, _, check = escaped_pgn(state, None)
    return text, check


def escaped_pgn(state: GameState, escape: Callable[[str], str] | None,
                quote: str = "") -> tuple[str, str | None, str | None]:
    """:func:`pgn_and_check`, and with *escape* (a string -> the same escaped, e.g. the inside of its JSON
    string; character by character, ``"\n"`` to ``escape("\n")``) the text escaped, from movetext lines each
    escaped once (the text is as long as the game, issue 12), between two *quote* (``'"'``: the JSON string).
    None instead of it without *escape*.

    Each text is one join of its lines (no copy of the whole text after it).
    """
    start = _start_board_cached(state.start_fen, state.chess960)
    if start is None:
        text = rebuild_pgn(state)   # an invalid start FEN: rare, and python-chess decides what to write
        return text, None if escape is None else quote + escape(text) + quote, None
    headers = _header_lines(state)
    with _MOVETEXTS_LOCK:
        movetext = _movetext_for(state, start)
        count, tail = movetext.render(state)
        check = movetext.check_mark(state)
        lines = movetext.lines[:count]
        escaped = movetext.escaped(count, escape) if escape is not None else None
    # the text's lines joined, then rstrip() + "\n": in one join when the last line ends in no blank (always: the
    # movetext's lines are stripped and the result closes it), else the text stripped after the join
    text = "\n".join([*headers, "", *lines, *tail, ""])
    stripped = len(text) > 1 and text[-2].isspace()
    if stripped:
        text = text.rstrip() + "\n"
    if escape is None:
        return text, None, check
    if stripped:
        return text, quote + escape(text) + quote, check
    assert escaped is not None
    newline = escape("\n")
    return text, newline.join([quote + escape("\n".join(headers)), "", *escaped, *map(escape, tail),
                               quote]), check


def rebuild_pgn(state: GameState) -> str:
    """The PGN of :func:`game_pgn`, rebuilt from the start through python-chess's exporter (the reference)."""
    game, sans = _build(state)
    return game.accept(_Exporter(sans)) + "\n"


# --- Incremental movetext ---------------------------------------------------------------------

#: python-chess's line width for the movetext (``StringExporter(columns=80)``).
_COLUMNS = 80


def write_token(lines: list[str], current: str, token: str) -> str:
    """python-chess's ``StringExporterMixin.write_token``: a new line when *token* does not fit."""
    if _COLUMNS - len(current) < len(token):
        if current:
            lines.append(current.rstrip())
        current = ""
    return current + token


def comment_token(comment: str) -> str:
    """python-chess's ``visit_comment`` token."""
    return "{ " + comment.replace("}", "").strip() + " } "


def _clean(text: str) -> str:
    """:func:`_tag`'s character mapping (control characters and line separators to spaces), without the
    strip, and braces to parentheses: applied item by item, it equals :func:`_tag` on the joined text."""
    if text.isprintable():
        return text.replace("{", "(").replace("}", ")")
    return "".join(" " if unicodedata.category(c) in {"Cc", "Zl", "Zp"} else c
                   for c in text.replace("{", "(").replace("}", ")"))


def shared_prefix(records: list[_T], moves: Sequence[_T]) -> int:
    """How many leading items *moves* shares with *records* (move records, UCI strings, movetext lines).

    List comparisons run at C speed and stop at the first object that is not the same; the usual cases
    (*moves* extends *records*, or its last item or two changed) take one or two of them, a retraction
    a binary search.
    """
    limit = min(len(records), len(moves))
    items = moves if isinstance(moves, list) else list(moves)   # a list compares with a list only
    size, count = len(records), len(items)
    for length in (limit, limit - 1, limit - 2):   # (the whole list, not a copy, when it is the prefix)
        if length >= 0 and (records if length == size else records[:length]) == \
                (items if length == count else items[:length]):
            while length < limit and records[length] == items[length]:
                length += 1
            return length
    low, high = 0, limit - 2   # records[:low] matches, records[:high] does not
    while high - low > 1:
        middle = (low + high) // 2
        if records[:middle] == items[:middle]:
            low = middle
        else:
            high = middle
    return low


class _Movetext:
    """The movetext of one game's legal prefix, as python-chess's exporter writes it, kept move by move.

    ``records`` are the records written (the legal prefix, or part of it); for each, the exporter's state
    before its move number (``before``) and after its SAN (``after_san``); ``lines``, ``current`` and
    ``force`` are the exporter's state after the last one's comment. Extending by a move costs one SAN;
    going back (a retraction, a record whose clocks changed) truncates to the last unchanged move.
    The items of the tail comment (the record after an illegal move that stood) are kept per record too.
    """

    def __init__(self, base: tuple[str | None, bool], start: chess.Board) -> None:
        self.base = base
        self.start = start
        self.board = start.copy(stack=False)
        self.records: list[MoveRecord] = []
        self.sans: list[str] = []
        self.before: list[tuple[int, str, bool]] = []
        self.after_san: list[tuple[int, str]] = []
        self.lines: list[str] = []
        self.current = ""
        self.force = True
        #: The record where the legal prefix stops (illegal, or not replayable), once seen.
        self.stop_record: MoveRecord | None = None
        #: The tail comment's items (from record ``tail_first`` on): their records and cleaned texts.
        self.tail_first = -1
        self.tail_records: list[MoveRecord] = []
        self.tail_texts: list[str] = []
        #: The moves :meth:`truncate` took back, from record ``redo_at`` on: (uci, san of the record, the move,
        #: python-chess's SAN). A record written again with the same uci and san (the usual case: the last
        #: move's clocks filled in at its completion) takes its move and SAN from here, not from python-chess.
        self.redo_at = 0
        self.redo: list[tuple[str, str, chess.Move, str]] = []
        #: The indices of the records replayed as a null move (``0000``): the board's position then is not
        #: the record's, so :meth:`check_mark` does not answer.
        self.null_at: list[int] = []
        #: :attr:`lines` escaped (:meth:`escaped`), and the function that escaped them
        self.escaped_lines: list[str] = []
        self.escape: Callable[[str], str] | None = None

    def common(self, moves: tuple[MoveRecord, ...]) -> int:
        """The number of leading records *moves* shares with :attr:`records`."""
        return shared_prefix(self.records, moves)

    def truncate(self, length: int) -> None:
        """Forget the records from *length* on."""
        if length >= len(self.records):
            return
        undone: list[tuple[str, str, chess.Move, str]] = []
        while len(self.board.move_stack) > length:
            index = len(self.board.move_stack) - 1
            record = self.records[index]
            undone.append((record.uci, record.san, self.board.pop(), self.sans[index]))
        undone.reverse()
        if self.redo_at == len(self.records):
            undone.extend(self.redo)
        self.redo_at, self.redo = length, undone
        del self.records[length:]
        del self.sans[length:]
        del self.after_san[length:]
        lines, self.current, self.force = self.before[length]
        del self.before[length:]
        del self.lines[lines:]
        del self.escaped_lines[lines:]
        while self.null_at and self.null_at[-1] >= length:
            self.null_at.pop()

    def _number(self, index: int) -> str | None:
        """The move number token before move *index*, as python-chess writes it (None when it writes none)."""
        start = self.start
        number = start.fullmove_number + (index + (1 if start.turn == chess.BLACK else 0)) // 2
        white = (index % 2 == 0) == (start.turn == chess.WHITE)
        if white:
            return f"{number}. "
        return f"{number}... " if self.force else None

    def extend(self, state: GameState) -> None:
        """Write the records of *state* after :attr:`records`, up to the end or the first that does not replay."""
        moves = state.moves
        board = self.board
        for index in range(len(self.records), len(moves)):
            record = moves[index]
            if record is self.stop_record:
                return
            redo = self.redo
            step = index - self.redo_at
            move: chess.Move | None
            if redo and 0 <= step < len(redo) and redo[step][0] == record.uci and redo[step][1] == record.san \
                    and record.legal:
                move, san = redo[step][2], redo[step][3]   # the same move from the same position: its SAN
                board.push(move)
            else:
                if redo:
                    redo.clear()
                made = _MADE.get((position_key(board), record.uci)) if record.legal else None
                if made is not None:
                    move, san = made   # made in this very position: parse_uci's move, python-chess's SAN
                    board.push(move)
                else:
                    move = _parse_move(board, record) if record.legal else None
                    san = board.san_and_push(move) if move is not None else ""
            if move is None:
                if record.legal and record != self.stop_record:
                    _LOGGER.warning("game %s: move %s (ply %d) does not replay; the rest of the record "
                                    "goes to a PGN comment", state.game_id, record.uci, record.ply)
                self.stop_record = record
                return
            lines = self.lines
            self.before.append((len(lines), self.current, self.force))
            current = self.current
            number = self._number(index)
            if number is not None:
                current = write_token(lines, current, number)
            if not move:
                self.null_at.append(index)
            current = write_token(lines, current, san + " ")
            self.after_san.append((len(lines), current))
            self.force = False
            comment = _annotations(record)
            if comment:
                current = write_token(lines, current, comment_token(comment))
                self.force = True
            self.current = current
            self.records.append(record)
            self.sans.append(san)

    def check_mark(self, state: GameState) -> str | None:
        """``"#"``, ``"+"`` or ``""`` (neither) for the position after *state*'s last move, from python-chess's
        SAN of it (its check suffix), or None when that is not known to be the position of ``state.fen``.

        Known when the movetext holds the whole record (every move replayed, no null move), the record's
        last move left ``state.fen`` (its ``fen_after``) and its SAN in the record is python-chess's here.
        """
        moves = state.moves
        if not moves or len(self.records) != len(moves) or self.null_at:
            return None
        last = moves[-1]
        san = self.sans[-1]
        if self.records[-1] != last or last.fen_after != state.fen or last.san != san:
            return None
        return san[-1] if san[-1] in "#+" else ""

    def _tail_items(self, state: GameState, first: int) -> list[str]:
        """The cleaned items of the tail comment from record *first* on (see :func:`_tail_comment`)."""
        moves = state.moves
        if self.tail_first != first:
            self.tail_first = first
            self.tail_records.clear()
            self.tail_texts.clear()
        keep = shared_prefix(self.tail_records, moves[first:])
        del self.tail_records[keep:]
        del self.tail_texts[keep:]
        for index in range(first + keep, len(moves)):
            record = moves[index]
            self.tail_records.append(record)
            self.tail_texts.append(_clean(_tail_item(self.start, record, index)))
        return self.tail_texts

    def render(self, state: GameState) -> tuple[int, list[str]]:
        """The movetext lines for *state*, whose legal prefix is :attr:`records` (after :meth:`extend`): the
        first *n* of :attr:`lines`, then the lines returned."""
        result = state.result if state.result in {"1-0", "0-1", "1/2-1/2"} else "*"
        extra: list[str] = []
        stopped = len(self.records)
        if stopped < len(state.moves):
            items = self._tail_items(state, stopped)
            first = state.moves[stopped]
            reason = _tail_reason(first)
            tail = (_clean(f"boardd: {reason} at ply {first.ply}; the record continues from the physical "
                           "position: ") + "; ".join(items) + _clean(f". Position: {state.moves[-1].fen_after}"))
            tail = tail.strip() or "?"
            if stopped == 0:
                lines, current = 0, ""
                comment = tail
            else:
                lines, current = self.after_san[-1]
                comment = f"{_annotations(self.records[-1])} {tail}".strip()
            current = write_token(extra, current, comment_token(comment))
        else:
            lines, current = len(self.lines), self.current
        current = write_token(extra, current, result + " ")
        if current:
            extra.append(current.rstrip())
        return lines, extra

    def escaped(self, count: int, escape: Callable[[str], str]) -> list[str]:
        """*escape* of each of the first *count* :attr:`lines`, each line escaped once (kept per movetext)."""
        if self.escape is not escape:
            self.escape, self.escaped_lines = escape, []
        done = self.escaped_lines
        del done[len(self.lines):]
        done.extend(map(escape, self.lines[len(done):count]))
        return done[:count]


#: Movetexts of recent games, most recent last: a state differs from the last one of its game by a move or
#: two, so a render writes only the new moves. Several games (a relay, an archive) each keep theirs.
_MOVETEXTS: OrderedDict[int, _Movetext] = OrderedDict()
_MOVETEXTS_SIZE = 16
_MOVETEXTS_LOCK = threading.Lock()


def _movetext_for(state: GameState, start: chess.Board) -> _Movetext:
    """The cached movetext that shares the most records with *state*, brought up to date (or a new one)."""
    base = (state.start_fen, state.chess960)
    best: _Movetext | None = None
    best_common = -1
    for movetext in reversed(_MOVETEXTS.values()):
        if movetext.base != base or len(movetext.records) <= best_common:
            continue   # (it cannot share more than the best so far: the choice is the same without it)
        common = movetext.common(state.moves)
        if common > best_common:
            best, best_common = movetext, common
            if common == len(movetext.records):
                break
    if best is None or (best_common == 0 and best.records):
        best = _Movetext(base, start)
        _MOVETEXTS[id(best)] = best
        while len(_MOVETEXTS) > _MOVETEXTS_SIZE:
            _MOVETEXTS.popitem(last=False)
    else:
        _MOVETEXTS.move_to_end(id(best))
        best.truncate(best_common)
    best.extend(state)
    return best


#: What the tags other than the clocks depend on.
_HeaderFields = tuple[str, str, str, str, int | None, str, str, str, str, str, str | None, str | None, bool]


@functools.lru_cache(maxsize=256)
def _fixed_headers(fields: _HeaderFields) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The tag lines before and after the clock tags, in the order of :func:`_build`'s python-chess headers."""
    (event, site, date, round_, board_no, white, black, result, game_id, time_control, termination, start_fen,
     chess960) = fields
    head = [
        ("Event", _tag(event)), ("Site", _tag(site)), ("Date", _tag(date, "????.??.??")),
        ("Round", pgn_round(_tag(round_), board_no)), ("White", _tag(white)), ("Black", _tag(black)),
        ("Result", result if result in {"1-0", "0-1", "1/2-1/2"} else "*"),
    ]
    if board_no is not None:
        head.append(("Board", str(board_no)))
    if _tag(game_id, ""):
        head.append(("GameId", _tag(game_id)))
    head.append(("TimeControl", pgn_time_control(time_control)))
    pgn_term = pgn_termination(termination)
    if pgn_term is not None:
        head.append(("Termination", _tag(pgn_term)))
    after: list[tuple[str, str]] = []
    start = _start_board_cached(start_fen, chess960)
    assert start is not None   # game_pgn checked it
    fen = start.fen()
    if fen != chess.STARTING_FEN or start.chess960:   # a Chess960 game states its start, even 518's (_build)
        after += [("FEN", fen), ("SetUp", "1")]
    if start.chess960:
        after.append(("Variant", "Chess960"))
    return (tuple(f'[{name} "{value}"]'.rstrip() for name, value in head),
            tuple(f'[{name} "{value}"]'.rstrip() for name, value in after))


def _header_lines(state: GameState) -> list[str]:
    head, after = _fixed_headers((state.event, state.site, state.date, state.round, state.board_no, state.white,
                                  state.black, state.result, state.game_id, state.time_control,
                                  state.termination, state.start_fen, state.chess960))
    lines = list(head)
    if state.clock.white is not None:
        lines.append(f'[WhiteClock "{clock_tag(state.clock.white)}"]')
    if state.clock.black is not None:
        lines.append(f'[BlackClock "{clock_tag(state.clock.black)}"]')
    lines.extend(after)
    return lines


def archive_pgn(states: Iterable[GameState]) -> str:
    """Several games as one PGN file: games separated by a blank line (what the lichess push API takes)."""
    return "\n".join(game_pgn(state) for state in states)
