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
    ``Variant "Chess960"``, ``SetUp "1"`` and ``FEN``. ``Round`` is ``"r.b"``
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
    The daemon renders the PGN after every change of the record. Replaying the
    record and computing SAN is the costly part, so the legal prefix and its SAN
    are kept in a small cache keyed on the moves: a render replays only the
    moves added since a recent render (results are identical; a test compares
    them with python-chess's own exporter).

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
from collections.abc import Iterable
from dataclasses import dataclass

import chess
import chess.pgn

from boardd.core.outputs import GameState, MoveRecord

__all__ = ["archive_pgn", "clock_tag", "format_clock", "game_pgn", "pgn_game", "pgn_round", "pgn_termination",
           "pgn_time_control"]

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


def _start_board(state: GameState) -> chess.Board | None:
    """The starting position, or None when ``start_fen`` is not a position python-chess accepts."""
    try:
        return chess.Board(state.start_fen or chess.STARTING_FEN, chess960=state.chess960)
    except ValueError:
        _LOGGER.error("game %s: start FEN %r is invalid; all moves go to a comment", state.game_id,
                      state.start_fen)
        return None


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


def _annotations(record: MoveRecord) -> str:
    """``[%clk …] [%emt …]`` for one move (the mover's clock after the move)."""
    remaining = record.clock_white if record.side == chess.WHITE else record.clock_black
    parts = []
    if remaining is not None:
        parts.append(f"[%clk {format_clock(remaining)}]")
    if record.emt is not None:
        parts.append(f"[%emt {format_clock(record.emt)}]")
    return " ".join(parts)


def _move_number(start: chess.Board | None, record: MoveRecord, index: int) -> str:
    """``"12."`` or ``"12..."`` for the *index*-th (0-based) move of the record."""
    fullmove = start.fullmove_number if start is not None else 1
    offset = 1 if start is not None and start.turn == chess.BLACK else 0
    number = fullmove + (index + offset) // 2
    return f"{number}." if record.side == chess.WHITE else f"{number}..."


def _tail_comment(state: GameState, start: chess.Board | None, first: int) -> str:
    """The record from move *first* (0-based) on, for a PGN comment (see the module docstring)."""
    items = []
    for index in range(first, len(state.moves)):
        record = state.moves[index]
        text = f"{_move_number(start, record, index)} {record.san or record.uci}"
        notes = (["illegal"] if not record.legal else []) + ([record.uci] if record.uci not in {"", "0000"} else [])
        if notes:
            text += f" ({', '.join(notes)})"
        remaining = record.clock_white if record.side == chess.WHITE else record.clock_black
        if remaining is not None:
            text += f" clk {format_clock(remaining)}"
        if record.emt is not None:
            text += f" emt {format_clock(record.emt)}"
        items.append(text)
    first_record = state.moves[first]
    reason = "an illegal move stood" if not first_record.legal else "a move could not be replayed"
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


#: Replayed records by (start FEN, Chess960, moves): a state differs from the last one by a move or
#: two, so each render replays only the new moves (and logs a move that does not replay once).
_REPLAYED: OrderedDict[tuple[object, ...], _Replayed] = OrderedDict()
_REPLAYED_SIZE = 32
_REPLAYED_LOOKBACK = 4
_REPLAYED_LOCK = threading.Lock()


def _replay(state: GameState, start: chess.Board | None) -> _Replayed:
    """The legal prefix of *state*'s record (see "Illegal moves that stood"), from the cache when possible."""
    keys = tuple((record.uci, record.san, record.legal) for record in state.moves)
    base = (state.start_fen, state.chess960)
    cached: _Replayed | None = None
    done = 0
    with _REPLAYED_LOCK:
        for length in range(len(keys), max(-1, len(keys) - _REPLAYED_LOOKBACK - 1), -1):
            hit = _REPLAYED.get((*base, keys[:length]))
            if hit is not None:
                _REPLAYED.move_to_end((*base, keys[:length]))
                cached, done = hit, length
                break
    if cached is not None and (done == len(keys) or cached.stopped is not None):
        result = cached
    else:
        moves = list(cached.moves) if cached is not None else []
        board = (cached.board if cached is not None else start)
        board = board.copy(stack=False) if board is not None else None
        stopped: int | None = None
        for index in range(done, len(keys)):
            record = state.moves[index]
            move = _parse_move(board, record) if board is not None and record.legal else None
            if move is None or board is None:
                if record.legal:
                    _LOGGER.warning("game %s: move %s (ply %d) does not replay; the rest of the record "
                                    "goes to a PGN comment", state.game_id, record.uci, record.ply)
                stopped = index
                break
            moves.append((move, board.san_and_push(move)))
        result = _Replayed(moves=tuple(moves), stopped=stopped, board=board if stopped is None else None)
    with _REPLAYED_LOCK:
        _REPLAYED[(*base, keys)] = result
        _REPLAYED.move_to_end((*base, keys))
        while len(_REPLAYED) > _REPLAYED_SIZE:
            _REPLAYED.popitem(last=False)
    return result


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

    Example (1.e4 with clocks, round 3 board 12)::

        [Event "..."]
        ...
        [Round "3.12"]
        ...
        1. e4 { [%clk 1:29:58] [%emt 0:00:02] } *
    """
    game, sans = _build(state)
    return game.accept(_Exporter(sans)) + "\n"


def archive_pgn(states: Iterable[GameState]) -> str:
    """Several games as one PGN file: games separated by a blank line (what the lichess push API takes)."""
    return "\n".join(game_pgn(state) for state in states)
