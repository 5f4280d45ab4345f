"""Deterministic generator of DGT captures that look like recordings of real hardware.

What the real recordings show (protocols.md §1.4-§1.7, §1.11, §9; arnsholt/dgtdriver
``1.inbytes``: 1 dump, 323 BWTIME, 131 field updates for a 3+2 Fischer game), and what
:func:`generate` reproduces for a whole game of a PGN file:

* the host sequence (``4b 4d``, dump on the version, long serial, clock version request,
  a ``45`` keep-alive every few seconds) with its replies interleaved, the version ack of a
  DGT 3000 (clock 2.0) and, after the first clock command, the all-zero BWTIME of BT
  firmware 2.10;
* a DGT 3000 in UPDATE_NICE polled about three times a second: a BWTIME whenever what it
  shows changed, i.e. once per displayed-second change of the running side and on every
  status change. Status bytes ``0x08`` (stopped, left to move), ``0x09`` (left runs),
  ``0x13`` (right runs), ``0x12`` / ``0x08`` (stopped at the end); the Fischer icon ``0x20``
  in both hours bytes; the increment shown with the new status or (``late_increment``) in
  a later BWTIME; a flag fall as hours byte ``0x30`` (D4 + the icon) at 0:00:00;
* field updates per scan (every 0.2-0.25 s), with the §1.5 dynamics: victim lifted first,
  king-first castling, sliding pieces with intermediate squares, pawns slid two squares,
  the new square before the old one, a transient placement; the updates of a move come
  before the BWTIME carrying the new status (the press is seen at the next clock poll);
* the board turned round (``rotated``: fields in the board's own frame, as board 2 of the
  captures).

White's time is on the left of the clock (the captures and boardd's default). The result
is a list of ``(t, direction, bytes)`` records: :meth:`Capture.jsonl` writes the timestamped
JSON Lines form (received bytes sometimes split over two lines, as serial reads return
them), :meth:`Capture.raw` the bytes a serial sniffer saw (optionally starting mid-message,
with line garbage between messages), :meth:`Capture.raw_hex` the same as hex text.

Run ``python -m tests.drivers.captures.realistic`` to rewrite the checked-in fixtures.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.pgn

from boardd.core.events import ClockSide, Content
from drivers.dgt.codec import (
    BoardDump,
    ClockAck,
    ClockTimes,
    DgtMessage,
    FieldUpdate,
    LongSerialNr,
    SerialNr,
    Version,
    encode_message,
)
from drivers.dgt.mapping import code_from_content, field_to_square, square_to_field
from drivers.sim import load_pgn_game

__all__ = ["Capture", "Options", "generate", "load_game", "move_reports"]

#: One scan's reports: (square in the real frame, new content), in the order sent.
Group = list[tuple[chess.Square, Content]]
#: A scan: how many scan periods after the previous one it comes, and its reports.
Scan = tuple[int, Group]

_BYTE_S = 10 / 9600  # one byte at 9600 baud, 8N1


@dataclass(frozen=True, slots=True)
class Options:
    """What varies between generated captures."""

    seed: int = 0
    base_s: int = 180
    increment_s: int = 2
    rotated: bool = False
    #: Probability that the increment shows in a BWTIME after the one carrying the new status.
    late_increment: float = 0.3
    #: The side to move at this ply (0-based) does not move and loses on time; the game stops there.
    flag_at_ply: int | None = None
    #: Send the all-zero BWTIME after the first clock command.
    zero_bwtime: bool = True
    #: At this ply the mover first makes an illegal move with the piece of his move and presses; the arbiter
    #: corrects it (7.5.1): paused or on the running clock, the piece put back, the penalty time added, the
    #: offender's side restarted; then the game's move is made with the same piece.
    correction_at_ply: int | None = None
    #: "paused" (pause, restore, time, lever while paused, restart) or "running" (restore, press the
    #: opponent's side) or "paused-lever-at-restart" (restart first, then the lever to the offender)
    correction_form: str = "paused"


@dataclass(slots=True)
class Capture:
    """A generated capture and what it must replay to."""

    options: Options
    records: list[tuple[float, str, bytes]] = field(default_factory=list)
    #: The moves played (UCI), in order.
    moves: list[str] = field(default_factory=list)
    #: The presser's remaining seconds after each press, increment included.
    clocks: list[float] = field(default_factory=list)
    #: Which §1.5 patterns and clock effects occur, and how many messages of each kind.
    counts: Counter[str] = field(default_factory=Counter)
    flagged: chess.Color | None = None

    def jsonl(self) -> str:
        """The timestamped form: header, ``tx`` and ``rx`` lines (some rx split over two lines)."""
        rng = random.Random(self.options.seed + 7)
        lines = [json.dumps({"t": 0.0, "capture": "dgt", "port": "/dev/ttyACM0", "v": 1})]
        for index, (t, direction, data) in enumerate(self.records):
            if direction == "rx" and len(data) > 3 and rng.random() < 0.08:
                cut = rng.randint(1, len(data) - 1)
                later = t + cut * _BYTE_S
                if index + 1 < len(self.records):
                    later = min(later, self.records[index + 1][0])
                lines.append(json.dumps({"t": round(t, 6), "rx": data[:cut].hex(" ")}))
                lines.append(json.dumps({"t": round(later, 6), "rx": data[cut:].hex(" ")}))
                continue
            lines.append(json.dumps({"t": round(t, 6), direction: data.hex(" ")}))
        return "\n".join(lines) + "\n"

    def raw(self, *, skip: int = 0, garbage: float = 0.0) -> bytes:
        """The received bytes without times; *skip* drops the first bytes (the sniffer started
        mid-message), *garbage* is the probability of line garbage before a message."""
        rng = random.Random(self.options.seed + 11)
        out = bytearray()
        junk = (bytes.fromhex("00 13 7f"), bytes.fromhex("ff 00 04 11"), bytes.fromhex("8e 00 06 10 00 00"),
                bytes.fromhex("55"), bytes.fromhex("a5 00 03"), bytes.fromhex("8d 00"))
        for _, direction, data in self.records:
            if direction != "rx":
                continue
            if garbage and rng.random() < garbage:
                out += rng.choice(junk)
                self.counts["garbage"] += 1
            out += data
        return bytes(out[skip:])

    def raw_hex(self) -> bytes:
        """The received bytes as hex text, 16 bytes a line (what some sniffers save)."""
        data = self.raw()
        return b"\n".join(data[i:i + 16].hex(" ").encode() for i in range(0, len(data), 16)) + b"\n"


def load_game(path: Path, index: int = 0) -> chess.pgn.Game:
    """Game *index* (0-based) of a PGN file."""
    return load_pgn_game(path, index + 1)


def move_reports(board: chess.Board, move: chess.Move, rng: random.Random, used: Counter[str]) -> list[Scan]:
    """The scans reporting *move* on *board* (before the move), with the §1.5 dynamics.

    Each scan comes one scan period after the previous one, or two when the hand is slower
    (it travels between two pieces more than a square apart, or takes its time); a sliding
    piece and a transient placement are seen in consecutive scans.
    """
    piece = board.piece_at(move.from_square)
    assert piece is not None
    fr, to = move.from_square, move.to_square
    placed = chess.Piece(move.promotion, piece.color) if move.promotion else piece

    def hand() -> int:
        return rng.choice((1, 1, 1, 2))

    if board.is_castling(move) and board.chess960:
        return _chess960_castling(board, move, rng, used)
    if board.is_castling(move):
        rank = chess.square_rank(fr)
        kingside = board.is_kingside_castling(move)
        rook_from = chess.square(7 if kingside else 0, rank)
        king_to, rook_to = chess.square(6 if kingside else 2, rank), chess.square(5 if kingside else 3, rank)
        rook = board.piece_at(rook_from)
        used["castling_king_first"] += 1
        if rng.random() < 0.4:
            return [(0, [(fr, None)]), (hand(), [(king_to, piece), (rook_from, None)]), (hand(), [(rook_to, rook)])]
        return [(0, [(fr, None)]), (hand(), [(king_to, piece)]), (hand(), [(rook_from, None)]),
                (hand(), [(rook_to, rook)])]
    if board.is_en_passant(move):
        used["en_passant"] += 1
        victim = chess.square(chess.square_file(to), chess.square_rank(fr))
        return [(0, [(victim, None)]), (hand(), [(fr, None)]), (hand(), [(to, placed)])]
    if board.is_capture(move):
        if rng.random() < 0.6:
            used["capture_victim_first"] += 1
            travel = 1 if chess.square_distance(fr, to) <= 1 else 2
            return [(0, [(to, None)]), (max(travel, hand()), [(fr, None)]), (hand(), [(to, placed)])]
        used["capture_replaced"] += 1
        return [(0, [(fr, None)]), (hand(), [(to, placed)])]  # the victim swapped within a scan: never seen empty
    between = sorted(chess.SquareSet(chess.between(fr, to)), key=lambda sq: chess.square_distance(fr, sq))
    if piece.piece_type == chess.PAWN and len(between) == 1 and rng.random() < 0.5:
        used["pawn_slid"] += 1
        return [(0, _shuffled([(fr, None), (between[0], piece)], rng)),
                (1, _shuffled([(between[0], None), (to, piece)], rng))]
    if piece.piece_type in (chess.ROOK, chess.BISHOP, chess.QUEEN) and between and rng.random() < 0.5:
        used["slide"] += 1
        path = sorted(rng.sample(between, rng.randint(1, len(between))), key=lambda sq: chess.square_distance(fr, sq))
        scans: list[Scan] = [(0, _shuffled([(fr, None), (path[0], piece)], rng))]
        for prev, square in zip(path, [*path[1:], to], strict=True):
            scans.append((1, _shuffled([(prev, None), (square, piece)], rng)))
        return scans
    if piece.piece_type != chess.KING and not move.promotion and rng.random() < 0.1:
        wrong = [sq for sq in chess.SQUARES if chess.square_distance(sq, to) == 1 and sq != fr
                 and board.piece_at(sq) is None]
        if wrong:
            used["transient_placement"] += 1
            square = rng.choice(wrong)
            return [(0, [(fr, None)]), (hand(), [(square, piece)]), (1, [(square, None)]), (1, [(to, placed)])]
    if rng.random() < 0.5:
        used["new_before_old"] += 1
        return [(0, [(to, placed), (fr, None)])]
    used["quiet"] += 1
    return [(0, [(fr, None)]), (hand(), [(to, placed)])]


def _shuffled(group: Group, rng: random.Random) -> Group:
    rng.shuffle(group)
    return group


class _Sim:
    """The board + DGT 3000 + host, as a time-ordered list of records."""

    def __init__(self, options: Options, capture: Capture) -> None:
        self.o = options
        self.cap = capture
        self.rng = random.Random(options.seed)
        self.seq = 0
        self.out: list[tuple[float, int, str, bytes]] = []
        start = float(options.base_s + options.increment_s)
        self.time = {ClockSide.LEFT: start, ClockSide.RIGHT: start}
        self.flag = {ClockSide.LEFT: False, ClockSide.RIGHT: False}
        self.running: ClockSide | None = None
        self.lever = ClockSide.LEFT
        self.now = 0.0
        self.next_poll = 0.35
        self.next_keepalive = 5.0
        self.pending: list[tuple[float, ClockSide, float]] = []  # late increments
        self.last_sent: bytes | None = None

    # --- output ----------------------------------------------------------------------------

    def rx(self, at: float, message: DgtMessage) -> None:
        data = encode_message(message)
        self.out.append((at, self.seq, "rx", data))
        self.seq += 1
        self.cap.counts[type(message).__name__] += 1

    def tx(self, at: float, hex_text: str) -> None:
        self.out.append((at, self.seq, "tx", bytes.fromhex(hex_text)))
        self.seq += 1

    # --- clock -----------------------------------------------------------------------------

    def _run(self, until: float) -> None:
        side = self.running
        if side is not None and until > self.now:
            left = self.time[side] - (until - self.now)
            if left <= 0:
                left = 0.0
                if not self.flag[side]:
                    self.flag[side] = True
                    self.cap.counts["flag_fall"] += 1
            self.time[side] = left
        self.now = max(self.now, until)

    def reading(self) -> ClockTimes:
        def shown(value: float) -> int:
            return max(0, min(10 * 3600 - 1, math.ceil(value - 1e-9)))

        icon = 0x20 if self.o.increment_s else 0
        status = 0x01 if self.running is not None else 0
        status |= 0x12 if self.lever is ClockSide.RIGHT else 0x08
        return ClockTimes(right_s=shown(self.time[ClockSide.RIGHT]), left_s=shown(self.time[ClockSide.LEFT]),
                          right_flags=icon | (0x10 if self.flag[ClockSide.RIGHT] else 0),
                          left_flags=icon | (0x10 if self.flag[ClockSide.LEFT] else 0), status=status)

    def _poll(self, at: float) -> None:
        reading = self.reading()
        data = encode_message(reading)
        if data != self.last_sent:
            self.last_sent = data
            self.rx(at, reading)

    def until(self, t: float) -> None:
        """Let time pass to *t*: clock polls (BWTIME on change), late increments, keep-alives."""
        while True:
            due = min([self.next_poll, self.next_keepalive, *(p[0] for p in self.pending)])
            if due > t:
                break
            self._run(due)
            if self.pending and due == min(p[0] for p in self.pending):
                item = min(self.pending)
                self.pending.remove(item)
                self.time[item[1]] += item[2]
            elif due == self.next_poll:
                self._poll(due)
                self.next_poll = due + self.rng.uniform(0.28, 0.38)
            else:
                self.tx(due, "45")
                self.rx(due + 0.012, SerialNr(text="12345"))
                self.next_keepalive = due + self.rng.uniform(4.0, 7.0)
        self._run(t)

    def press(self, at: float, side: ClockSide) -> None:
        self.until(at)
        inc = float(self.o.increment_s)
        self.cap.clocks.append(self.time[side] + inc)
        if inc and self.rng.random() < self.o.late_increment:
            self.pending.append((at + self.rng.uniform(0.45, 0.9), side, inc))
            self.cap.counts["late_increment"] += 1
        else:
            self.time[side] += inc
        self.lever = self.running = side.other

    # --- board -----------------------------------------------------------------------------

    def field(self, square: chess.Square) -> int:
        return square_to_field(63 - square if self.o.rotated else square)

    def dump(self, at: float, board: chess.Board) -> None:
        codes = []
        for f in range(64):
            square = field_to_square(f)
            codes.append(code_from_content(board.piece_at(63 - square if self.o.rotated else square)))
        self.rx(at, BoardDump(codes=tuple(codes)))

    def report(self, at: float, group: Group) -> float:
        self.until(at)
        for square, content in group:
            self.rx(at, FieldUpdate(field=self.field(square), code=code_from_content(content)))
            at += 5 * _BYTE_S
        return at


def _chess960_castling(board: chess.Board, move: chess.Move, rng: random.Random, used: Counter[str]) -> list[Scan]:
    """Chess960 castling as players do it (2009/2014 Appendix F.3, Guidelines II.3): the recommended way (king
    off the board beside its square, rook moved, king placed), king first, rook first (where the squares allow),
    king-only or rook-only when the other piece already stands on its square."""
    rank = chess.square_rank(move.from_square)
    kingside = board.is_kingside_castling(move)
    kf, rf = move.from_square, move.to_square
    kt, rt = chess.square(6 if kingside else 2, rank), chess.square(5 if kingside else 3, rank)
    king, rook = board.piece_at(kf), board.piece_at(rf)
    if kf == kt:
        used["castling960_rook_only"] += 1
        return [(0, [(rf, None)]), (rng.choice((1, 2)), [(rt, rook)])]
    if rf == rt:
        used["castling960_king_only"] += 1
        return [(0, [(kf, None)]), (rng.choice((1, 2, 3)), [(kt, king)])]
    methods = ["recommended"]
    if kt != rf:
        methods.append("king_first")
    if rt != kf:
        methods.append("rook_first")
    method = rng.choice(methods)
    used[f"castling960_{method}"] += 1
    if method == "king_first":
        return [(0, [(kf, None)]), (rng.choice((1, 2)), [(kt, king)]), (rng.choice((1, 2)), [(rf, None)]),
                (rng.choice((1, 2)), [(rt, rook)])]
    if method == "rook_first":
        return [(0, [(rf, None)]), (rng.choice((1, 2)), [(rt, rook)]), (rng.choice((1, 2)), [(kf, None)]),
                (rng.choice((1, 2)), [(kt, king)])]
    return [(0, [(kf, None)]), (rng.choice((2, 3, 4)), [(rf, None)]), (rng.choice((1, 2)), [(rt, rook)]),
            (rng.choice((1, 2, 3)), [(kt, king)])]


def generate(game: chess.pgn.Game, options: Options = Options()) -> Capture:
    """A capture of *game* played on a DGT board with a DGT 3000 (see the module docstring)."""
    cap = Capture(options=options)
    sim = _Sim(options, cap)
    rng = sim.rng
    board = game.board()
    # connect (protocols.md §1.11)
    sim.tx(0.20, "4b 4d")
    sim.rx(0.23, Version(major=3, minor=10))
    sim.tx(0.25, "42")
    sim.dump(0.27, board)
    sim.tx(0.30, "45 55")
    sim.rx(0.31, SerialNr(text="12345"))
    sim.rx(0.33, LongSerialNr(text="3.10A12345"))
    sim.tx(0.34, "2b 03 03 09 00")
    if options.zero_bwtime:
        sim.rx(0.36, ClockTimes(right_s=0, left_s=0, right_flags=0, left_flags=0, status=0))
    sim.until(1.1)
    sim.rx(1.1, ClockAck(ack0=0x10, ack1=0x09, ack2=0x20, ack3=0x00))  # clock version 2.0: a DGT 3000
    # Black starts White's clock (the lever is already high on White's side, the left)
    t = rng.uniform(2.0, 4.0)
    sim.until(t)
    sim.running = ClockSide.LEFT
    for ply, node in enumerate(game.mainline()):
        move = node.move
        mover = ClockSide.LEFT if board.turn == chess.WHITE else ClockSide.RIGHT
        if options.flag_at_ply == ply:
            sim.until(t + sim.time[mover] + 2.0)
            cap.flagged = board.turn
            break
        if options.correction_at_ply == ply:
            t = _correction(sim, board, move, t, mover)
        scans = move_reports(board, move, rng, cap.counts)
        gaps = [sum(rng.uniform(0.2, 0.25) for _ in range(periods)) for periods, _ in scans[1:]]
        press_delay = rng.uniform(0.25, 0.9)
        remaining = sim.time[mover]
        usage = min(max(0.0, remaining - 1.0), 1.2 + rng.expovariate(1 / (0.04 * remaining + 0.5)))
        think = max(0.3, usage - sum(gaps) - press_delay)
        at = last = t + think
        for index, (_, group) in enumerate(scans):
            if index:
                at += gaps[index - 1]
            last = sim.report(at, group)
        t = last + press_delay
        sim.press(t, mover)
        board.push(move)
        cap.moves.append(move.uci())
    else:
        # the players stop the clock after the game
        t += rng.uniform(1.5, 3.0)
        sim.until(t)
        sim.running = None
    sim.until(t + 2.0)
    cap.records = [(round(at, 6), direction, data) for at, _, direction, data in sorted(sim.out)]
    cap.counts["field_updates"] = cap.counts["FieldUpdate"]
    cap.counts["bwtime"] = cap.counts["ClockTimes"]
    return cap


def _illegal_target(board: chess.Board, square: chess.Square, rng: random.Random) -> chess.Square | None:
    """An empty square the piece on *square* cannot legally reach (nor any legal move leads to that board)."""
    legal = {m.to_square for m in board.legal_moves if m.from_square == square}
    options = [sq for sq in chess.SQUARES if sq != square and sq not in legal and board.piece_at(sq) is None
               and chess.square_distance(sq, square) <= 2]
    return rng.choice(options) if options else None


def _correction(sim: _Sim, board: chess.Board, move: chess.Move, t: float, mover: ClockSide) -> float:
    """The illegal move, its press and the arbiter's correction (7.5.1) on the DGT board and DGT 3000."""
    rng = sim.rng
    piece = board.piece_at(move.from_square)
    target = _illegal_target(board, move.from_square, rng)
    if piece is None or target is None or board.is_castling(move):
        return t
    sim.cap.counts["correction"] += 1
    t += rng.uniform(2.0, 6.0)
    sim.report(t, [(move.from_square, None)])
    t += rng.uniform(0.2, 0.5)
    sim.report(t, [(target, piece)])
    t += rng.uniform(0.3, 0.9)
    sim.press(t, mover)
    opponent = mover.other
    form = sim.o.correction_form
    t += rng.uniform(2.0, 8.0)  # the opponent notices, the arbiter comes
    if form.startswith("paused"):
        sim.until(t)
        sim.running = None
        t += rng.uniform(2.0, 5.0)
    sim.report(t, [(target, None)])
    t += rng.uniform(0.3, 1.2)
    sim.report(t, [(move.from_square, piece)])
    t += rng.uniform(1.0, 3.0)
    if form.startswith("paused"):
        sim.until(t)
        sim.time[opponent] += 60.0  # blitz 2023: one minute for the opponent (A.5.2 via B)
        sim.time[mover] -= float(sim.o.increment_s)  # the increment of the illegal press taken back
        t += rng.uniform(1.0, 3.0)
        sim.until(t)
        if form == "paused":
            sim.lever = mover
            t += rng.uniform(0.5, 2.0)
            sim.until(t)
            sim.running = mover
        else:
            sim.running = sim.lever  # restarted: the opponent's side runs, then the arbiter moves the lever
            t += rng.uniform(0.5, 1.5)
            sim.until(t)
            sim.lever = sim.running = mover
    else:
        sim.until(t)
        sim.lever = sim.running = mover  # the arbiter presses the opponent's side
    return t + rng.uniform(0.5, 1.5)


#: The checked-in fixtures: (file stem, PGN file, game index, options).
FIXTURES = (
    ("tata2022-88-3+2", "tatamast22.pgn", 88, Options(seed=88)),
    ("tata2022-30-3+2-rotated-flag", "tatamast22.pgn", 30, Options(seed=30, rotated=True, flag_at_ply=101)),
)


def write_fixtures(pgn_dir: Path, out_dir: Path) -> list[Path]:
    """Write every fixture as ``.jsonl`` (timestamped) and ``.bin`` (raw)."""
    written = []
    for stem, pgn, index, options in FIXTURES:
        capture = generate(load_game(pgn_dir / pgn, index), options)
        (out_dir / f"{stem}.jsonl").write_text(capture.jsonl(), encoding="utf-8")
        (out_dir / f"{stem}.bin").write_bytes(capture.raw(skip=3, garbage=0.02))
        written += [out_dir / f"{stem}.jsonl", out_dir / f"{stem}.bin"]
    return written


if __name__ == "__main__":  # pragma: no cover
    from tests.conftest import PGN_DIR

    for path in write_fixtures(PGN_DIR, Path(__file__).parent):
        print(path)
