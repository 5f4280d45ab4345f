"""The arbiter's correction cycle (articles 7.5.1, 7.5.2, 7.5.5; rules-spec §3.7): after an illegal move.

After an illegal move completed by a press the arbiter (or the players under his instruction) pauses the
clock, or corrects on the running clock; puts the pieces back in any order (a captured piece comes back
from beside the board, a promoted piece is exchanged for the pawn); corrects the times (the penalty time to
the opponent, the increment taken back); restarts the clock with the offender's side running, which on a
DGT 3000 shows as the lever changing while the clock is paused or at the restart; and the offender makes
his replacement move, under touch-move for the piece touched in the illegal move (7.5.1 applies 4.3).

None of these steps is a player's irregularity. This room follows one cycle from the illegal press until
the offender's replacement move is completed (or the opponent plays on from the illegal position, which
then stood): the board showing the position before the illegal move reinstates it (the finding resolves
itself), the lever moved to the offender's side is the arbiter's restart (no press by the opponent), and the
time added or taken away on the clock during the cycle is compared with the suggestion (a difference is an
info note for the record).

On a running clock (the players put the position back themselves, or the arbiter without pausing) the hands
that bring the board back belong to the illegal move's incident, one incident, one alert: a piece set down off
the position being reinstated waits until it stays (``on_the_way``); after an illegal move found later, the
findings of hands wait until the board shows that position (dropped) or the hands stop elsewhere, or a press
(published: ``withholds``), a press meanwhile being the clock handled in the correction, no player's press
(``press_during_restoration``); the 7.5.2 exchange of the pawn for a queen waits the same way (``_fix_target``).
What leads away from the reinstatement is still flagged, only after the wait. A state on the way that reads as a
legal move of the side to move, its piece from a square the restoration changes, is made like any move (never lost)
but published only once confirmed: a press, a move that does not wait, the board still 6 s and not heading back
(``restoration_hands``, ``hold_back``, ``publication``); the board going on back takes it back unseen. The cycle
follows its finding: dismissed or closed with another finding's ruling, its position is no longer awaited;
confirmed, it still is (``ruled``). docs/architecture.md has the whole.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import chess

from boardd.core.engine.common import _TAKEBACK_DEPTH
from boardd.core.outputs import (
    Evidence,
    GameEvent,
    Irregularity,
    MoveCompleted,
    MoveMade,
    MovesRetracted,
    Output,
    Severity,
    StateChanged,
    Status,
)
from boardd.core.settings import Regime

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine

#: the resolution of a clock reading (s): DGT clocks report whole seconds (protocols.md §1.7.1 BWTIME, §2.4 the
#: DGT 3000's Time packet; rules-spec §2.2)
_RESOLUTION_S = 1.0

#: time differences under this are display rounding, not a correction (s): a change read as the difference of two
#: readings, each to the second, is off by up to one resolution step either way
_TIME_TOLERANCE_S = 2 * _RESOLUTION_S

#: how late a clock may report the time of a side it stopped (s): the DgtPi reads the DGT 3000 about every 2 s and
#: "needs 2secs for a stopped clock to return the correct(!) time" (protocols.md §2.5), plus the display's second.
#: A reading within this long after the pause that lowers only the side that ran, by at most this much, is the
#: pause's own time settling, not the arbiter's hand (:meth:`Correction.paused_reading`)
_PAUSE_SETTLE_S = 2.0 + _RESOLUTION_S

#: a piece set down elsewhere than the position being reinstated, on a running clock, is judged once it stayed
#: this long (s): a hand on its way (the wrong square, seen and moved on; a piece parked to free a square) is the
#: restoration's, a piece left there is a change of its own
_ON_THE_WAY_S = 6.0

#: findings of hands on the board that are withheld while an illegal move found later may be being reinstated
#: (:meth:`Correction.withholds`); the touch findings of a state in between read as a move, too
_TOUCH_CODES = frozenset({"TOUCH_MOVE_SUSPECTED", "TOUCH_CAPTURE_SUSPECTED", "RELEASED_MOVE_CHANGED"})
_HANDS_CODES = frozenset({"OUT_OF_TURN_CHANGE", "ADJUST_OUT_OF_TURN", "TAKEBACK_DETECTED", "TWO_HANDS_SUSPECTED",
                          "OPPONENT_STARTED_BEFORE_MOVE_MADE"}) | _TOUCH_CODES


def _mmss(seconds: float) -> str:
    sign = "-" if seconds < 0 else "+"
    s = round(abs(seconds))
    return f"{sign}{s // 60}:{s % 60:02d}"


def _hms(seconds: float) -> str:
    s = max(0, round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _name(color: chess.Color) -> str:
    return "White" if color == chess.WHITE else "Black"


@dataclass(slots=True)
class _Cycle:
    """One correction cycle: the illegal-move finding, its offender and the ply to reinstate."""

    irregularity_id: str
    offender: chess.Color
    ply: int
    before: chess.BaseBoard  # the placement before the illegal move
    reinstated_at: float | None = None
    how: str = ""
    #: times (white, black) when the clock was paused, and the changes seen at the restarts
    paused_times: tuple[float | None, float | None] | None = None
    #: when the clock was paused, and the side that ran then: the pause's times may still settle
    #: (:meth:`Correction.paused_reading`)
    paused_at: float | None = None
    paused_ran: chess.Color | None = None
    #: the time of the side that ran as the pause's own reading showed it (possibly late, :meth:`Correction.on_pause`)
    paused_raw: float | None = None
    #: the times (white, black) when the arbiter first took the clock in the cycle (paused it, or set it from the
    #: tablet): what the suggested times are counted from (:meth:`Correction.suggested_times`)
    base: tuple[float, float] | None = None
    told: bool = False  # the suggestion was updated with the times the clock should show
    changed: dict[chess.Color, float] = dataclasses.field(
        default_factory=lambda: {chess.WHITE: 0.0, chess.BLACK: 0.0})
    restarted: bool = False
    arbiter_seen: bool = False  # the clock was paused during the cycle (the arbiter stepped in)
    fixed: str | None = None  # the law-based move the board was put right to (7.5.2 queen, a finished move)
    partly_back: bool = False  # the moves after the illegal one were taken back on the board (found later, 7.5.1)


@dataclass(slots=True)
class _Unpublished:
    """Moves made (in the record, their times those of the move) whose publication waits: states that may be a
    restoration's hands (:meth:`Correction.restoration_hands`)."""

    made: list[MoveMade]  # their MoveMade, in order (consecutive plies, the last ones of the record)
    since: float  # when the piece of the last one was set down

    @property
    def first(self) -> int:
        return self.made[0].move.ply

    @property
    def last(self) -> int:
        return self.made[-1].move.ply


def _reinstatable(irr: Irregularity, confirmed: set[str]) -> bool:
    """An illegal move still unresolved (or confirmed by the arbiter and not reinstated yet: *confirmed*) whose
    position before it is to be reinstated (7.5.1): its correction cycle can be (re)opened when that position is
    put back. A dismissed one, or one closed with another finding's ruling, is not."""
    return irr.severity is Severity.ILLEGAL_MOVE and (irr.status is not Status.RESOLVED or irr.id in confirmed) \
        and irr.side is not None and irr.suggestion.reinstate_ply == irr.ply


class Correction:
    """The arbiter's correction cycle (articles 7.5.1, 7.5.2, 7.5.5): reinstatement, restart, penalty time."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        self.cycle: _Cycle | None = None
        #: pieces put down off the position being reinstated on a running clock: square -> (since, piece)
        self.held: dict[int, tuple[float, chess.Piece]] = {}
        #: findings of hands withheld while the position before an illegal move found later may be coming back
        self.withheld: list[Irregularity] = []
        #: illegal-move findings the arbiter confirmed (closed by his ruling) whose position is still awaited
        self.confirmed: set[str] = set()
        #: moves made during a restoration found later whose publication waits (:meth:`hold_back`)
        self.unpublished: _Unpublished | None = None
        #: the last ply published as made (what the broadcast shows), and up to which ply moves were kept back
        #: (:meth:`publication`)
        self.shown = 0
        self.held_upto = 0
        #: the cycle of an illegal move that stood because its offender played on after the reply, and the ply of
        #: that move (:meth:`on_move_made`): open again if that move is taken back before it was completed
        self.stood: tuple[int, _Cycle] | None = None
        #: the last cycle closed (by the replacement move, :meth:`replaced`)
        self.closed: _Cycle | None = None
        #: presses the clock counted and the Laws do not, per side: an illegal move's, reinstated; the arbiter's
        #: restart by the lever on a running clock
        self.counted: dict[chess.Color, list[str]] = {}
        #: the illegal-move findings whose correction of the clock was compared with the suggestion and noted
        #: (``ARBITER_ADJUST``, once per finding: :meth:`_rule`)
        self.adjusted: set[str] = set()

    # ------------------------------------------------------------------ opening and closing

    def open(self, irr: Irregularity, offender: chess.Color, ply: int) -> None:
        """An illegal-move-class completion (or a mismatch at a press) that the arbiter may correct."""
        self.held.clear()
        self.cycle = _Cycle(irregularity_id=irr.id, offender=offender, ply=ply,
                            before=chess.BaseBoard(self.g.fen_before(ply).split(" ")[0]))

    def ruled(self, outs: list[Output], closed: list[Irregularity], *, accept: bool, at: float) -> None:
        """The arbiter ruled: these findings were closed by it (the one he ruled on, and those closed with it: the
        incident's primary and the findings that joined it, ``Findings.close_two_hands``, ``_resolve_related``).

        The correction cycle follows its finding's status. Confirmed (the suggestion applied), an illegal move that
        asks for the reinstatement still awaits its position (the board putting it back reinstates it, found later
        too). Dismissed, or closed with a dismissed finding, its position is no longer awaited: the cycle ends (the
        board put back is then the players' takeback, not a reinstatement; the opponent's press is his, not the
        arbiter's restart), and so do its 7.5.2 fix and its replacement under touch-move; the findings of hands
        withheld for it are published (what they were waiting for will not come)."""
        ids = {irr.id for irr in closed if irr.severity is Severity.ILLEGAL_MOVE}
        if not ids:
            return
        if accept:
            self.confirmed |= ids
            return
        self.confirmed -= ids
        g = self.g
        cycle = self.cycle
        if cycle is not None and cycle.irregularity_id in ids and cycle.reinstated_at is None:
            self.cycle = None
            standing = any(g.phys.squares[sq] == piece for sq, (_, piece) in self.held.items())
            self.held.clear()
            if standing and not g.oot_raised and g.playing:
                # a piece set down off that position, waiting to be told from the hands putting it back: a change
                # of its own now
                self.e.whose_change.raise_out_of_turn(outs, not g.board.turn, at)
        if g.pending_fix is not None and g.pending_fix[4] in ids:
            g.pending_fix = None
        if g.replacement is not None and g.replacement[0] in ids:
            g.replacement = None
        if g.replacement_due is not None and g.replacement_due[0] in ids:
            g.replacement_due = None
        if self.withheld and self.cycle is None and not self._later_reinstatable(on_board=True):
            self.release_withheld(outs, at)

    def reopen(self, ply: int) -> bool:
        """The arbiter reinstates the position before an illegal move found only later (7.5.1: "if during a
        game it is found that an illegal move has been completed"), after its cycle closed when play went on:
        the cycle of that move is open again, so the restart, the penalty time and the finding follow it."""
        if self.cycle is not None and self.cycle.ply == ply:
            return True
        for irr in reversed(list(self.g.irr.values())):
            if irr.ply == ply and _reinstatable(irr, self.confirmed):
                assert irr.side is not None
                self.open(irr, irr.side, ply)
                if self.g.paused:  # paused before: the times now are what the arbiter's correction changes
                    self.on_pause(self.g.clock.white, self.g.clock.black)
                return True
        return False

    def _found_later(self) -> None:
        """The board shows the position before an illegal move whose cycle closed when play went on (found only
        later, 7.5.1: the position immediately before the irregularity is reinstated, the later moves with it):
        that move's cycle is open again. With the clock paused (the arbiter at the board) an earlier position
        after it is a step of that reinstatement too (the moves taken back one by one). Not in the "otherwise"
        regime, where the opponent's move made the illegal move stand (A.5.2: a return is a takeback).

        Only an illegal move of the last plies (:meth:`depth`) can be reopened: with no illegal-move finding
        that recent (``g.illegal_ply``, the latest, whatever its status) there is nothing to look for (most
        board changes of a game)."""
        g = self.g
        n = len(g.records)
        depth = self.depth()
        if g.illegal_ply < max(0, n - depth) or g.regime == Regime.OTHERWISE.value or n < 2:
            return
        key = g.phys.key()
        oldest = max(-1, n - 1 - depth)
        for ply in range(n - 1, oldest, -1):
            if g.keys[ply] == key:
                # paused: this ply or an earlier one (the moves taken back one by one); else this ply only
                for back in range(ply, oldest if g.paused else ply - 1, -1):
                    if self.reopen(back):
                        return
                return

    def depth(self) -> int:
        """How far back (plies) an illegal move found later is looked for: the last ``_TAKEBACK_DEPTH`` on a running
        clock (the players putting it back, play going on); with the clock paused (the arbiter at the board, 7.5.1:
        "if during a game it is found that an illegal move has been completed") the whole game: the arbiter
        reconstructs the position before it however many moves ago, before or after he tells the tablet."""
        return len(self.g.records) if self.g.paused else _TAKEBACK_DEPTH

    def arbiter_hands(self) -> bool:
        """The clock stands paused while the position before an illegal move is being put back: the hands on
        the board are the arbiter's (or the players' on his instruction), not a player's move (4.1, 6.11.2)."""
        return self.g.paused and self.awaiting_reinstatement()

    def awaiting_reinstatement(self) -> bool:
        """A cycle is open and the position before the illegal move is not back yet: the hands on the board
        are (most likely) the arbiter's or the players' on his instruction, putting it back."""
        return self.cycle is not None and self.cycle.reinstated_at is None

    def restoring(self, placed: list[int]) -> bool:
        """Pieces put down on these squares while the position before the illegal move is not back yet are the
        correction's when each one is what that position has there (7.5.1) or was put back where it stood (the
        hands hesitating: lifted, put back, lifted again), or whatever they are while the clock stands paused (the
        arbiter's hands, 6.11.2, 7.5.1): not a change or an adjustment out of turn."""
        cycle = self.cycle
        if cycle is None:
            # paused: an illegal move found later is being put back move by move (7.5.1)
            return self.g.paused and self._later_reinstatable()
        if cycle.reinstated_at is not None:
            return False
        official = self.g.index
        return self.g.paused or all(self.g.phys.squares[sq] in (cycle.before.piece_at(sq), official.piece_at(sq))
                                    for sq in placed)

    def on_the_way(self, placed: list[int], at: float) -> bool:
        """While the position before the illegal move is being put back on a running clock (nobody paused it: the
        players restore it themselves, or the arbiter without stopping the clock, 6.11.2 "may"), pieces put down
        elsewhere than that position wait: moved on (a detour of the hands putting it back) they were the
        restoration's, part of the illegal move's incident; left there for ``_ON_THE_WAY_S`` they are judged as a
        change of their own (:meth:`judge_held`: what leads away from the reinstatement is still flagged)."""
        cycle = self.cycle
        if cycle is None or cycle.reinstated_at is not None:
            return False
        fixed = self._fix_target(cycle)
        if not self._room_for(cycle.before, placed) and (fixed is None or not self._room_for(fixed, placed)):
            return False
        g = self.g
        for sq in placed:
            piece = g.phys.squares[sq]
            since = max((t for t, s, _ in g.seg_places if s == sq), default=at)
            if isinstance(piece, chess.Piece) and self.held.get(sq, (0.0, None))[1] != piece:
                self.held[sq] = (since, piece)
        due = min(since for since, _ in self.held.values()) + _ON_THE_WAY_S
        if at >= due:
            self.held.clear()
            return False
        g.recheck_by(due)
        return True

    def judge_held(self, at: float) -> bool | None:
        """The wait of :meth:`on_the_way` is over: True if a piece put down off the position being reinstated still
        stands there (a change of its own), False if none does (they were the hands on their way), None if the
        wait goes on (timer set again) or there is nothing to judge."""
        if not self.held:
            return None
        g = self.g
        if not self.awaiting_reinstatement():
            self.held.clear()
            return None
        standing = {sq: (since, piece) for sq, (since, piece) in self.held.items() if g.phys.squares[sq] == piece}
        self.held = standing
        if not standing:
            return False
        due = min(since for since, _ in standing.values()) + _ON_THE_WAY_S
        if at < due:
            g.recheck_by(due)
            return None
        self.held.clear()
        return True

    def withholds(self, code: str) -> bool:
        """Is a finding of hands on the board (out of turn, a takeback, two hands, an early start) withheld?

        While an illegal move of the last plies is unresolved and the opponent replied to it, or its cycle closed
        when play went on (found only later, 7.5.1), the board may be on its way back to the position before it, in
        any order, on a running clock: the states in between are not told from play. Such findings wait
        (:meth:`withhold`): the board showing that position drops them (the hands that put it back belong to the
        illegal move's incident, one incident, one alert); the hands still for ``_ON_THE_WAY_S`` elsewhere, or a
        press, publish them as they were raised (what leads away from the reinstatement is still flagged, only
        later)."""
        if code not in _HANDS_CODES:
            return False
        cycle = self.cycle
        if cycle is None:
            return self._later_reinstatable(on_board=True)
        # noticed after the opponent's reply (7.5.1): his move goes back with it, the offender to move meanwhile
        # (not the touch findings of the reply itself: a move made, judged as any move)
        return cycle.reinstated_at is None and len(self.g.records) > cycle.ply + 1 and code not in _TOUCH_CODES

    # ------------------------------------------------------------------ states that read as moves

    def _befores(self) -> list[chess.BaseBoard]:
        """The positions a restoration found later may be bringing back (7.5.1: the position before an illegal move
        the opponent replied to, still unresolved, of the last plies); empty when none can be under way."""
        g = self.g
        if g.regime == Regime.OTHERWISE.value:
            return []
        cycle = self.cycle
        n = len(g.records)
        if cycle is not None:
            # (a cycle put right, 7.5.2's queen or a finished move standing in the record, has nothing to bring back)
            return [cycle.before] if cycle.reinstated_at is None and cycle.fixed is None and n > cycle.ply + 1 \
                and not g.records[cycle.ply].legal else []
        if g.illegal_ply < max(0, n - self.depth()):
            return []
        return [chess.BaseBoard(g.fen_before(irr.ply).split(" ")[0]) for irr in self._recent_reinstatable(n - 1)
                if not g.records[irr.ply].legal]

    def restoration_hands(self, move: chess.Move) -> bool:
        """May the board showing a legal move of the side to move be the hands of a restoration found later, not a
        move? 7.5.1: after the opponent's reply to an illegal move not yet noticed, the position before it is put
        back on the running clock (or the paused one), in any order, a piece set down on the way: the offender sets
        his piece down where it reads as a move of his, puts the illegally moved piece back first (itself a legal
        move), or a reply's piece goes back along a legal move. So when the piece moved comes from a square the
        restoration changes (the position before has something else there).

        Such a move is made like any other (the record never loses it, its times are those of the move) but its
        publication waits (:meth:`hold_back`) until it is confirmed: a press completes it, a move that is not such
        a state follows it, or the board stood still ``_ON_THE_WAY_S`` after it, not heading back. The board going
        on back retracts it unseen."""
        official = self.g.index
        return any(before.piece_at(move.from_square) != official.piece_at(move.from_square)
                   for before in self._befores())

    def defers(self, move: chess.Move, *, replace: bool) -> bool:
        """Does the publication of this made move wait (:meth:`restoration_hands`)? A released move changed (R07)
        waits when the move it replaces did."""
        u = self.unpublished
        if replace:
            return u is not None and u.last == len(self.g.records)
        return self.restoration_hands(move)

    def hold_back(self, outs: list[Output], made: list[Output], at: float) -> None:
        """The outputs of a move made (*made*) whose publication waits: its ``MoveMade`` is kept back, the rest
        goes out now (:meth:`publication` leaves out a retraction of what was not published, and publishes the
        moves kept back before a completion of one of them)."""
        u = self.unpublished or _Unpublished(made=[], since=at)
        n = len(self.g.records)
        for out in made:
            if isinstance(out, MoveMade) and out.move.ply == n:
                u.made = [m for m in u.made if m.move.ply < n] + [out]  # (R07: the one it replaces goes)
            else:
                outs.append(out)
        u.since = at
        self.held_upto = max(self.held_upto, n)
        self.unpublished = u if u.made else None
        if u.made:
            self.g.recheck_by(at + _ON_THE_WAY_S)

    def _heading_back(self) -> bool:
        """Is the board, off the official position, on its way to the position being reinstated (every square that
        differs empty, showing what that position has there, or a piece it still needs elsewhere)?"""
        g = self.g
        squares = g.phys.squares
        official = g.index
        differing = [sq for sq in chess.SQUARES if squares[sq] != official.piece_at(sq)]
        if not differing:
            return False
        for before in self._befores():
            wanted = {before.piece_at(sq) for sq in chess.SQUARES if squares[sq] != before.piece_at(sq)}
            if all(squares[sq] is None or squares[sq] == before.piece_at(sq) or squares[sq] in wanted
                   for sq in differing):
                return True
        return False

    def kept_back_undone(self, outs: list[Output], at: float) -> bool:
        """The board shows the position before a move whose publication waits (:meth:`hold_back`): the piece put back
        where it came from (a detour of the hands, e.g. the bishop set down on b5 and back on c4), no press. Not a
        move of the game: a move is completed only by the press (6.2.1), and until then nothing but a presumed
        release (4.7, ``T_settle``) said it was played; the same player's piece back on its square with his clock
        still running says it was not. Taken out of the record (retracted: never published, the retraction is left
        out by :meth:`publication`); the player has the move again, his segment from when he got it."""
        u = self.unpublished
        if u is None:
            return False
        g = self.g
        records = g.records
        key = g.phys.key()
        back = next((ply for ply in range(min(u.last, len(records)) - 1, u.first - 2, -1) if g.keys[ply] == key), None)
        if back is None or any(rec.completed_at is not None for rec in records[back:]):
            return False
        first = records[back]
        self.e.restoration.retract_to(outs, back, at, "a move kept back, undone on the board before it was completed "
                                                      "(a restoration's hands)")
        self.taken_back(back + 1)
        if first.emt is not None:
            g.seg_start = first.made_at - first.emt
        return True

    def unpublished_from(self) -> int | None:
        """The first ply of the record not published yet (the state shows the record before it), or None."""
        return None if self.unpublished is None else self.unpublished.first

    def publication(self, outs: list[Output], at: float, *, flush: bool = False) -> list[Output]:
        """The outputs of a batch as published, with the moves whose publication waits (:meth:`hold_back`):

        * a move made after them that did not wait, or a completion of one of them (a press, the next move),
          publishes them first (confirmed: play goes on);
        * taken back (the board went on back) they are left out; a retraction that takes back nothing published
          (``shown``) is itself left out;
        * once the board stood still ``_ON_THE_WAY_S`` after the last one, not heading back (:meth:`_heading_back`),
          or with *flush* (an arbiter's command), they are published.
        """
        result: list[Output] = []
        for out in outs:
            u = self.unpublished
            if isinstance(out, MovesRetracted):
                if self.shown <= out.to_ply < self.held_upto:
                    self.held_upto = out.to_ply
                    continue  # it takes back nothing published, only moves whose publication waited
                self.shown = min(self.shown, out.to_ply)
            elif isinstance(out, MoveMade | MoveCompleted) and u is not None and out.move.ply >= u.first:
                result += self._flush(at)
            if isinstance(out, MoveMade):
                self.shown = out.move.ply
            result.append(out)
        u = self.unpublished
        if u is not None:
            records = self.g.records
            # (taken back meanwhile, the board going on back: never published)
            u.made = [m for m in u.made if m.move.ply <= len(records) and records[m.move.ply - 1].uci == m.move.uci
                      and records[m.move.ply - 1].made_at == m.move.made_at]
            if not u.made:
                self.unpublished = None
            else:
                due = max(u.since, self.g.last_board_t) + _ON_THE_WAY_S  # the board still that long
                if flush or (at >= due and not self._heading_back()):
                    result += self._flush(at)
                elif at < due:
                    self.g.recheck_by(due)
        return result

    def confirmed_by_play(self, at: float) -> list[Output]:
        """A move that did not wait is made: the moves waiting are published first (play goes on)."""
        return self._flush(at)

    def _flush(self, at: float) -> list[Output]:
        u, self.unpublished = self.unpublished, None
        if u is None:
            return []
        self.shown = u.last
        self.held_upto = 0
        return [*u.made, StateChanged(at=at)]

    def withhold(self, irr: Irregularity) -> None:
        self.withheld.append(irr)
        due = self.g.last_board_t + _ON_THE_WAY_S
        self.g.recheck_by(due)

    def update_withheld(self, irr: Irregularity) -> bool:
        """A withheld finding updated (withdrawn, resolved) before it was published: True if it was one."""
        for i, held in enumerate(self.withheld):
            if held.id == irr.id:
                if irr.status is Status.RESOLVED:
                    del self.withheld[i]  # withdrawn before anyone saw it
                else:
                    self.withheld[i] = irr
                return True
        return False

    def release_withheld(self, outs: list[Output], at: float) -> None:
        """Publish the withheld findings (the board did not go back to the position before the illegal move)."""
        withheld, self.withheld = self.withheld, []
        for irr in withheld:
            self.e.findings.publish(outs, irr)
            if irr.incident is None and irr.severity is not Severity.INFO and self.e.findings.current_incident() \
                    is None:
                self.g.incident = (irr.id, irr.ply)
        if withheld:
            outs.append(StateChanged(at=at))

    def withheld_due(self, outs: list[Output], at: float) -> None:
        """The wait of :meth:`withhold`: the hands still that long and the position not back: published."""
        if not self.withheld:
            return
        due = self.g.last_board_t + _ON_THE_WAY_S
        if at < due:
            self.g.recheck_by(due)
            return
        self.release_withheld(outs, at)

    def _later_reinstatable(self, *, on_board: bool = False) -> bool:
        """An unresolved illegal-move finding of the last plies, whose cycle closed when play went on (7.5.1);
        *on_board*: one that put something on the board to take back (its record entry is the illegal move, not
        a press without a move, 7.5.3, where the position before it is the one the board showed anyway)."""
        g = self.g
        if g.regime == Regime.OTHERWISE.value:
            return False
        return any(not (on_board and g.records[irr.ply].legal) for irr in self._recent_reinstatable(len(g.records)))

    def _recent_reinstatable(self, upto: int) -> Iterator[Irregularity]:
        """The reinstatable illegal-move findings (:func:`_reinstatable`) of the last plies (:meth:`depth`) of the
        record, before ply *upto*."""
        low = len(self.g.records) - self.depth()
        return (irr for irr in self.g.irr.values() if low <= irr.ply < upto and _reinstatable(irr, self.confirmed))

    def press_during_restoration(self) -> str | None:
        """Is a press now one in the middle of a restoration found later (the id of the illegal-move finding whose
        position is being put back), not a player's press?

        After an illegal move noticed only after the opponent's reply (7.5.1: the position immediately before it is
        reinstated, the later moves with it), the board on its way back on a running clock (findings of hands
        withheld, or every square that differs from the official position one that the restoration changes, showing
        what the position before has there or empty: a piece in the hand putting it back): nobody is making a move.
        A press then is the clock handled during the correction (the opponent giving the offender his clock back,
        the offender stopping his, the arbiter's hand), not the completion of a move nor a press without a move
        (7.5.3, illegal-move class from 2018): no player's irregularity, least of all an illegal move."""
        g = self.g
        cycle = self.cycle
        if g.regime == Regime.OTHERWISE.value or (cycle is not None and cycle.reinstated_at is not None):
            return None
        if cycle is not None:
            if len(g.records) <= cycle.ply + 1 and not cycle.partly_back:
                return None  # not found later (no reply to take back): the press is :meth:`arbiter_restart`'s
            candidates = [(cycle.irregularity_id, cycle.before)]
        else:
            # (with findings withheld the later moves may be taken back already: the illegal move the last one)
            n = len(g.records)
            candidates = [(irr.id, chess.BaseBoard(g.fen_before(irr.ply).split(" ")[0]))
                          for irr in self._recent_reinstatable(n if self.withheld else n - 1)
                          if not g.records[irr.ply].legal]
        if not candidates:
            return None
        if self.withheld or self.held:
            return candidates[0][0]
        if g.phys.key() == g.index.key:
            # the moves after the illegal one taken back, the illegal move itself not yet: still on its way
            return cycle.irregularity_id if cycle is not None and cycle.partly_back else None
        official = g.index
        squares = g.phys.squares
        for irr_id, before in candidates:
            # every square off the official position empty (a piece in a hand), showing the position before, or
            # showing a piece that the position before still needs elsewhere (set down on its way, not yet moved on);
            # and at least one of the squares the restoration changes on its way (the pieces say what is going on)
            differing = [sq for sq in chess.SQUARES if squares[sq] != official.piece_at(sq)]
            wanted = {before.piece_at(sq) for sq in chess.SQUARES if squares[sq] != before.piece_at(sq)}
            if all(squares[sq] is None or squares[sq] == before.piece_at(sq) or squares[sq] in wanted
                   for sq in differing) and any(before.piece_at(sq) != official.piece_at(sq) for sq in differing):
                return irr_id
        return None

    def clock_handled(self, outs: list[Output], presser: chess.Color, irr_id: str, at: float) -> None:
        """A press during a restoration found later (:meth:`press_during_restoration`): the clock handled in the
        correction, an event of the incident; the findings of the hands keep waiting for the position."""
        outs.append(GameEvent(at=at, type="ARBITER_ACTION", code=None,
                              details={"clock_pressed_during_restoration": "white" if presser == chess.WHITE
                                       else "black", "irregularity": irr_id}))

    def _fix_target(self, cycle: _Cycle) -> chess.BaseBoard | None:
        """The law-based outcome the board may be put right to instead of the position before (7.5.2 from 2014:
        the pawn replaced by a queen; a castling finished), when one is pending for this cycle's finding."""
        pending = self.g.pending_fix
        if pending is None or pending[4] != cycle.irregularity_id or pending[0] != len(self.g.records):
            return None
        after = pending[3].copy(stack=False)
        after.push(pending[2])
        return after

    def _coming_back(self, piece: chess.Piece) -> bool:
        """Is a piece like this one on the board a captured piece coming back from beside it (more of them on the
        board than the official position has, and the position being reinstated has room for it)?"""
        cycle = self.cycle
        count = self.g.phys.count(piece)
        return cycle is not None and count > len(self.g.index.board.pieces(piece.piece_type, piece.color)) \
            and count <= len(cycle.before.pieces(piece.piece_type, piece.color))

    def _room_for(self, target: chess.BaseBoard, placed: list[int]) -> bool:
        """Has *target* room for the pieces put down on these squares (no more of each on the board than it has)?
        A piece it has no room for comes from beside the board for something else (e.g. the queen of a promotion
        finished on the opponent's time after an illegal press, rules-spec T28): not a piece on its way back."""
        squares = self.g.phys.squares
        for sq in placed:
            piece = squares[sq]
            if isinstance(piece, chess.Piece) and self.g.phys.count(piece) > \
                    len(target.pieces(piece.piece_type, piece.color)):
                return False
        return True

    def on_move_made(self, outs: list[Output], side: chess.Color, at: float) -> None:
        """A move entered the record: the offender's replacement ends the cycle; so does the offender's next
        move after the opponent's reply when nothing was reinstated (the illegal move stood).

        The opponent's reply alone does not: an illegal move is often noticed only after it, and 7.5.1 then
        reinstates the position before the illegal move, taking the reply back with it.
        """
        if self.stood is not None and self.stood[0] <= len(self.g.records):
            self.stood = None  # (the move that made it stand was played on from: it stays)
        cycle = self.cycle
        if cycle is None:
            return
        if cycle.reinstated_at is None:
            if side == cycle.offender and len(self.g.records) > cycle.ply + 1:
                self.close(outs, at)  # the offender plays on after the reply: the illegal move stood
                self.stood = (len(self.g.records) + 1, cycle)
            return
        self.close(outs, at)

    def replaced(self, ply: int) -> tuple[str, chess.Color] | None:
        """The illegal-move finding and offender of the cycle the move at *ply* closed as the replacement after
        a reinstatement (7.5.1: the position before it put back, not put right to a law-based move), else None."""
        cycle = self.closed
        if cycle is None or cycle.ply != ply or cycle.reinstated_at is None or cycle.fixed is not None:
            return None
        return cycle.irregularity_id, cycle.offender

    def replacement_incident(self, ply: int) -> str | None:
        """The incident of the correction whose replacement move (7.5.1) is the record's entry *ply* (0-based), else
        None: a note on that move (completed only by the player's next move, the arbiter having restarted the other
        side's clock) is the end of that correction, not an item of its own."""
        replaced = self.replaced(ply)
        irr = self.g.irr.get(replaced[0]) if replaced is not None else None
        return None if irr is None else irr.incident or irr.id

    def counted_presses(self, side: chess.Color) -> list[str]:
        """The presses of *side*'s clock counted by its move counter and not by the Laws (7.1): the illegal moves
        reinstated, the arbiter's restarts on a running clock."""
        return self.counted.get(side, [])

    def taken_back(self, ply: int) -> None:
        """The move *ply* was taken back on the board before it was completed (not a move of the game after all,
        :meth:`kept_back_undone`, ``MadeMoves.take_back``): if it was what made an illegal move stand (the offender
        playing on, :meth:`on_move_made`), that move's cycle is open again: the position before it may still be put
        back (7.5.1), in any order."""
        stood, self.stood = self.stood, None
        if stood is not None and stood[0] == ply and self.cycle is None and len(self.g.records) < ply:
            self.cycle = stood[1]

    def close(self, outs: list[Output], at: float) -> None:
        cycle = self.cycle
        if cycle is None:
            return
        self.cycle = None
        self.closed = cycle
        if cycle.reinstated_at is not None:
            self._rule(outs, cycle, at, final=True)

    def game_ended(self, outs: list[Output], result: str, termination: str, at: float) -> None:
        """The arbiter ends the game (``SetResult``), during the cycle (e.g. the second illegal move, 7.5.5) or
        not: the record ends with the last legal move (the illegal move of the cycle never was part of the game),
        and every finding of the game still asking for action (``open`` or ``acknowledged``, whatever its
        severity: an illegal move, a suspected two-handed move, a touch-move...) is closed with the result, once:
        the game is over (3.8), nothing is reinstated or ruled on any more, and the tablet no longer shows it as
        needing attention (the findings that joined an incident close with its primary). Findings of hands
        withheld meanwhile (an illegal move found later whose position might have come back) are never
        published: nothing is put back any more, and published after the result they would be a new alert for a
        game that is over."""
        cycle = self.cycle
        self.cycle = None
        retracted: str | None = None
        if cycle is not None:
            records = self.g.records
            if cycle.reinstated_at is None and len(records) == cycle.ply + 1 and not records[-1].legal:
                self.e.restoration.retract_to(outs, cycle.ply, at, "the illegal move is not part of the game (7.5.5)")
                retracted = cycle.irregularity_id
        self.confirmed.clear()
        self.withheld.clear()
        self.held.clear()
        ruling = f"game ended by the arbiter: {result}" + (f" ({termination})" if termination else "")
        closed = False
        first = [retracted] if retracted is not None else []  # (its own ruling, also when it joined an incident)
        for ident in [*first, *(i for i in self.g.irr if i != retracted)]:
            irr = self.g.irr[ident]  # (read now: closing a primary closes the findings that joined it)
            if irr.status in (Status.OPEN, Status.ACKNOWLEDGED):
                text = ruling + ("; the illegal move is not part of the game (7.5.5)" if irr.id == retracted else "")
                self.e.findings.update_finding(outs, dataclasses.replace(irr, status=Status.RESOLVED, ruling=text))
                closed = True
        if closed:
            outs.append(StateChanged(at=at))

    # ------------------------------------------------------------------ the board

    def board_reinstated(self, outs: list[Output], at: float) -> bool:
        """The board shows the position before the illegal move: reinstated (7.5.1), whoever put it back. (Or the
        position before a move kept back: :meth:`kept_back_undone`.)"""
        if self.kept_back_undone(outs, at):
            return True
        g = self.g
        if self.cycle is None:
            self._found_later()
        cycle = self.cycle
        if cycle is None or cycle.reinstated_at is not None or cycle.ply >= len(g.records):
            return False
        if g.keys[cycle.ply] != g.phys.key():
            return False
        self.e.restoration.reinstate_from_board(outs, cycle.ply, at)
        self.note_reinstated(outs, at, "the position was put back on the board")
        self.withheld.clear()  # the hands that put it back belong to the illegal move's incident (one alert)
        return True

    def partial_restore(self, outs: list[Output], ply: int, at: float) -> bool:
        """The board went back to a position between the illegal move and now (the opponent's reply taken back
        first): a step of the reinstatement, not a takeback by the players (no TAKEBACK, no out-of-turn). A position
        older than the one being reinstated is passed on the way (nothing retracted)."""
        cycle = self.cycle
        if cycle is None or cycle.reinstated_at is not None or ply >= len(self.g.records):
            return False
        if ply <= cycle.ply:
            # older than the position being reinstated (the one before it is that ply): a state on the way there,
            # the pieces put back in an order that passes it (a move before the illegal one undone by the reply)
            return ply < cycle.ply
        self.e.restoration.retract_to(outs, ply, at, "position being reinstated (7.5.1)")
        cycle.partly_back = True
        return True

    def note_reinstated(self, outs: list[Output], at: float, how: str) -> None:
        """The position before the illegal move is the official one again (by the board or by the arbiter)."""
        cycle = self.cycle
        if cycle is None or cycle.reinstated_at is not None:
            return
        cycle.reinstated_at = at
        cycle.how = how
        # the illegal press was a press of the clock's move counter that the Laws do not count (7.5.1 / 7.1)
        self.counted.setdefault(cycle.offender, []).append(f"the illegal press ({cycle.irregularity_id})")
        self.confirmed.discard(cycle.irregularity_id)
        self.g.two_hands.clear()  # a suspicion from the hands that put the position back is no player's (4.1)
        self._acted_in_window(outs, cycle, at)
        self._rule(outs, cycle, at, final=False)

    def _acted_in_window(self, outs: list[Output], cycle: _Cycle, at: float) -> None:
        """The "otherwise" regime (R22): the arbiter who acts on the illegal move before the opponent's next move
        (the clock paused, the position put back or put right on the board) applies 7.5.5 as on a claim (A.4.2,
        A.5.2: "if the arbiter observes an action taken under 7.5.1-7.5.4"): the move counts, its suggestion is that
        of the count (the second loses), whether or not he also enters the ruling on the tablet."""
        g = self.g
        if g.regime != Regime.OTHERWISE.value or not (cycle.arbiter_seen or g.paused):
            return
        win = next((w for w in g.claim_windows if w.irregularity_id == cycle.irregularity_id), None)
        irr = g.irr.get(cycle.irregularity_id)
        if win is None or irr is None:
            return
        win.claimed = True
        g.claim_windows.remove(win)
        pen = self.e.findings.count_claim(irr, win.offender)
        self.e.findings.update_finding(outs, dataclasses.replace(irr, suggestion=dataclasses.replace(
            irr.suggestion, add_to_opponent_s=pen.add_to_opponent_s, result=pen.result,
            remove_from_offender_s=pen.remove_from_offender_s, text=pen.text)))
        self.e.findings.note_limit(outs, irr.id, at)

    def board_fixed(self, outs: list[Output], irr_id: str, san: str, at: float) -> None:
        """The board shows the law-based outcome (7.5.2: the pawn replaced by a queen; a castling or en passant
        finished after the press): the move stands as that move and the finding resolves itself."""
        cycle = self.cycle
        if not self.g.paused and (cycle is None or not cycle.arbiter_seen):
            return  # finished by the player on the opponent's time: the finding stays for the arbiter
        if cycle is not None and cycle.irregularity_id == irr_id and cycle.reinstated_at is None:
            cycle.reinstated_at = at
            cycle.fixed = san
            cycle.restarted = True  # the opponent's clock runs on: nothing to restart
            self._acted_in_window(outs, cycle, at)
            self._rule(outs, cycle, at, final=False)
            return
        irr = self.g.irr.get(irr_id)
        if irr is not None and irr.status is not Status.RESOLVED:
            self.e.findings.update_finding(outs, dataclasses.replace(
                irr, status=Status.RESOLVED, ruling=f"put right on the board: {san} stands"))

    def incident(self, at: float) -> str | None:
        """The incident of the correction under way (the primary of its illegal move's finding, as the contract's
        ``incident``), which a note raised meanwhile joins, else None.

        From the illegal press to the replacement move completed (7.5.1: the position reinstated, the clock adjusted
        and restarted, the replacement made and pressed), whether or not the finding is resolved yet (the board put
        right before the pause). Not while the opponent plays on from the illegal move unnoticed (the position not
        being put back, nobody at the clock): his own play. An illegal move found later (its cycle closed when play
        went on) is under correction once the clock stands paused while it is still unresolved on the board."""
        cycle = self.cycle
        g = self.g
        closed = self.closed
        if cycle is None and closed is not None and closed.reinstated_at is not None \
                and len(g.records) == closed.ply + 1 and g.records[-1].completed_at in (None, at):
            # the replacement move (7.5.1), made and not yet completed: the end of the correction (its captured piece
            # parked, its promotion's order)
            cycle = closed
        if cycle is None:
            # the clock paused with an illegal move found later still on the board and unresolved: the arbiter at
            # the board putting it back move by move (its cycle opens again when its position is back, 7.5.1)
            later = [irr for irr in self._recent_reinstatable(len(g.records)) if not g.records[irr.ply].legal] \
                if g.paused and g.regime != Regime.OTHERWISE.value and g.illegal_ply >= len(g.records) - self.depth() \
                else []
            return later[-1].incident or later[-1].id if later else None
        if cycle.reinstated_at is None and len(g.records) > cycle.ply + 1 and not (
                g.paused or cycle.arbiter_seen or cycle.partly_back or self.withheld or self.held):
            return None
        irr = g.irr.get(cycle.irregularity_id)
        return None if irr is None else irr.incident or irr.id

    def arbiter_reinstates(self, ply: int) -> bool:
        """Is the arbiter's reinstatement to *ply* the one of this cycle?"""
        return self.cycle is not None and self.cycle.ply == ply

    # ------------------------------------------------------------------ the clock

    def on_pause(self, white: float | None, black: float | None, *, ran: chess.Color | None = None,
                 at: float | None = None, last: tuple[float, float] | None = None) -> None:
        """The clock paused during the cycle (*ran*: the side whose clock ran until then, if known; *last*: that
        side's time in the reading before the pause, and when it was read).

        The pause's own reading may show the side that ran as it was up to :data:`_PAUSE_SETTLE_S` before (the DgtPi,
        protocols.md §2.5): its time at the pause is reckoned from *last* and the time since (time is data), when the
        reading is two display steps (:data:`_TIME_TOLERANCE_S`) or more above it, a time the running clock had
        passed, and at most that much; the true reading that follows settles it (:meth:`paused_reading`). Less is the
        two readings' own seconds and their arrival (what the paused clock shows the arbiter): the reading stands."""
        cycle = self.cycle
        if cycle is not None:
            cycle.paused_raw = None
            if ran is not None and at is not None and last is not None and white is not None and black is not None:
                shown = white if ran == chess.WHITE else black
                reckoned = last[0] - (at - last[1])
                cycle.paused_raw = shown
                if _TIME_TOLERANCE_S <= shown - reckoned <= _PAUSE_SETTLE_S:
                    white, black = (reckoned, black) if ran == chess.WHITE else (white, reckoned)
            cycle.paused_times = (white, black)
            cycle.paused_at, cycle.paused_ran = at, ran
            cycle.arbiter_seen = True
            if cycle.base is None and white is not None and black is not None:
                cycle.base = (white, black)

    def paused_reading(self, white: float | None, black: float | None, at: float) -> None:
        """A reading while paused: within :data:`_PAUSE_SETTLE_S` of the pause, the side that ran shown lower by at
        most that much, the other side as it was, is the time of the pause itself, reported late (protocols.md
        §2.5: a stopped clock's time comes back correct only after the reading period): the pause's times (and
        the times the arbiter took the clock at, if this pause set them) are the settled ones. Anything else is the
        arbiter's hand (7.1), counted at the restart as before."""
        cycle = self.cycle
        if cycle is None or cycle.paused_times is None or cycle.paused_at is None or cycle.paused_ran is None \
                or at - cycle.paused_at > _PAUSE_SETTLE_S or white is None or black is None:
            return
        was_w, was_b = cycle.paused_times
        if was_w is None or was_b is None:
            return
        ran_was, ran_now, other_was, other_now = (was_w, white, was_b, black) if cycle.paused_ran == chess.WHITE \
            else (was_b, black, was_w, white)
        # (only lower: a reading above the time reckoned at the pause is the arbiter's hand, a second added at a time)
        shown = ran_was if cycle.paused_raw is None else max(ran_was, cycle.paused_raw)
        if ran_now >= ran_was or shown - ran_now > _PAUSE_SETTLE_S or abs(other_now - other_was) >= _RESOLUTION_S:
            return
        if cycle.base == (was_w, was_b):
            cycle.base = (white, black)
        cycle.paused_times = (white, black)

    def suggested_times(self, cycle: _Cycle, irr: Irregularity) -> tuple[float, float] | None:
        """The times (white, black) the clock should show after the correction (rules-spec R21, 7.1): those of the
        moment the arbiter took the clock (:attr:`_Cycle.base`), the penalty added to the opponent (7.5.5), the
        increment the illegal press earned taken from the offender (Arbiters' Manual). The rest (the time spent
        since the illegal move) is the arbiter's judgement and not suggested. None when there is nothing to
        suggest: no time known, or a result instead of a time penalty (the limit reached)."""
        sug = irr.suggestion
        if cycle.base is None or sug.result is not None or (sug.add_to_opponent_s is None
                                                            and sug.remove_from_offender_s is None):
            return None
        times = {chess.WHITE: cycle.base[0], chess.BLACK: cycle.base[1]}
        times[not cycle.offender] += float(sug.add_to_opponent_s or 0)
        times[cycle.offender] -= float(sug.remove_from_offender_s or 0)
        return times[chess.WHITE], times[chess.BLACK]

    def _told(self, cycle: _Cycle, irr: Irregularity) -> Irregularity:
        """*irr* whose suggestion says what times the clock should show (once per cycle, when they are known)."""
        target = None if cycle.told else self.suggested_times(cycle, irr)
        if target is None or cycle.base is None:
            return irr
        cycle.told = True
        w0, b0 = cycle.base
        text = (f"{irr.suggestion.text}; the clock should show White {_hms(target[0])}, Black {_hms(target[1])} "
                f"(it showed White {_hms(w0)}, Black {_hms(b0)} when the arbiter took it; the rest at his "
                f"judgement, 7.1)")
        return dataclasses.replace(irr, suggestion=dataclasses.replace(irr.suggestion, text=text))

    def tell_times(self, outs: list[Output], at: float) -> None:
        """The clock paused during the cycle (the arbiter at the board): the finding's suggestion says what times
        the clock should show (one update, the first time they are known)."""
        cycle = self.cycle
        if cycle is None or cycle.told:
            return
        irr = self.g.irr.get(cycle.irregularity_id)
        if irr is None:
            return
        told = self._told(cycle, irr)
        if told is not irr:
            self.e.findings.update_finding(outs, told)
            outs.append(StateChanged(at=at))

    def on_resume(self, outs: list[Output], white: float | None, black: float | None, at: float) -> None:
        cycle = self.cycle
        if cycle is None or cycle.paused_times is None:
            return
        self.paused_reading(white, black, at)  # (a pause shorter than the reading period: it settles only now)
        before, cycle.paused_times = cycle.paused_times, None
        self._times_changed(outs, cycle, before, (white, black), at)

    def on_times_set(self, outs: list[Output], before: tuple[float | None, float | None], white: float,
                     black: float, at: float) -> None:
        """The arbiter set the times from the tablet (``set-clock``): a correction of the clock like one made
        on the clock during a pause (a pause under way then goes on from the times set)."""
        cycle = self.cycle
        if cycle is None:
            return
        cycle.arbiter_seen = True
        if cycle.base is None and before[0] is not None and before[1] is not None:
            cycle.base = (before[0], before[1])
        if cycle.paused_times is not None:
            cycle.paused_times = (white, black)
        self._times_changed(outs, cycle, before, (white, black), at)

    def _times_changed(self, outs: list[Output], cycle: _Cycle, before: tuple[float | None, float | None],
                       after: tuple[float | None, float | None], at: float) -> None:
        """Count what the arbiter added or took away on each side; the clock is his again (restarted)."""
        for color, was, now in ((chess.WHITE, before[0], after[0]), (chess.BLACK, before[1], after[1])):
            if was is not None and now is not None and abs(now - was) >= _TIME_TOLERANCE_S:
                cycle.changed[color] += now - was
        cycle.restarted = True
        if cycle.reinstated_at is not None:
            self._rule(outs, cycle, at, final=False)

    def arbiter_restart(self, outs: list[Output], presser: chess.Color, at: float) -> bool:
        """A lever change that gives the offender the clock during the cycle is the arbiter's restart.

        The opponent has nothing to complete (his move was not made yet: the offender must replace his
        illegal move), so the lever moved from his side is the arbiter giving the offender the move back,
        on a running clock or at the restart; never a press without a move.
        """
        cycle = self.cycle
        if cycle is None or presser == cycle.offender:
            return False
        if len(self.g.records) > cycle.ply + 1 and cycle.reinstated_at is None:
            return False  # the opponent replied to the illegal move: presses are his again until a reinstatement
        if self.g.uncompleted.get(presser) is not None and self.g.uncompleted[presser] > cycle.ply:
            return False  # the opponent made a move after the illegal one: a real press
        official = self.g.index
        for sq in chess.SQUARES:
            content = self.g.phys.squares[sq]
            if content != official.piece_at(sq) and isinstance(content, chess.Piece) and content.color == presser \
                    and content != cycle.before.piece_at(sq) and not self._coming_back(content):
                # the board shows something the presser did, not the position being put back (the offender's
                # pieces anywhere are that position on its way: a piece set down on the way, not yet moved on)
                return False
        cycle.restarted = True
        # a press of the presser's side for the clock's move counter that the Laws do not count (7.1)
        self.counted.setdefault(presser, []).append(f"the arbiter's restart ({cycle.irregularity_id})")
        outs.append(GameEvent(at=at, type="ARBITER_ACTION", code=None,
                              details={"clock_restarted_for": "white" if cycle.offender == chess.WHITE else "black",
                                       "irregularity": cycle.irregularity_id}))
        return True

    # ------------------------------------------------------------------ the finding

    def _rule(self, outs: list[Output], cycle: _Cycle, at: float, *, final: bool) -> None:
        """The finding resolves itself: how it was reinstated and what the clock shows of the penalty.

        *final* (the replacement move completed): the times the arbiter set are compared with the suggestion
        (rules-spec R21: (a) the penalty to the opponent, 7.5.5; (b) the increment the illegal press earned, taken
        from the offender; each side that the suggestion names), a difference of a resolution step or more
        either way (:data:`_TIME_TOLERANCE_S`) is one info note (``ARBITER_ADJUST``, 7.1: his judgement stands).
        """
        irr = self.g.irr.get(cycle.irregularity_id)
        if irr is None:
            return
        opponent = not cycle.offender
        added = cycle.changed[opponent]
        removed = -cycle.changed[cycle.offender]
        parts = [f"put right on the board: {cycle.fixed} stands" if cycle.fixed is not None
                 else f"position reinstated at ply {cycle.ply} ({cycle.how})"]
        name = _name(opponent)
        if abs(added) >= _TIME_TOLERANCE_S:
            parts.append(f"{_mmss(added)} seen on the clock for {name}")
        if removed >= _TIME_TOLERANCE_S:
            parts.append(f"{_mmss(-removed)} for the offender")
        ruling = "; ".join(parts)
        told = self._told(cycle, irr)
        if irr.status is not Status.RESOLVED or irr.ruling != ruling or told is not irr:
            self.e.findings.update_finding(outs, dataclasses.replace(told, status=Status.RESOLVED, ruling=ruling))
            outs.append(StateChanged(at=at))
        if not final or not cycle.restarted or irr.id in self.adjusted:
            return
        self._compare(outs, cycle, irr, at)

    def _compare(self, outs: list[Output], cycle: _Cycle, irr: Irregularity, at: float) -> None:
        """The note of :meth:`_rule` when the times set differ from the suggested ones."""
        sug = irr.suggestion
        if sug.result is not None:
            return  # the limit reached: no time penalty to compare
        offender, opponent = cycle.offender, not cycle.offender
        wanted: dict[chess.Color, float] = {}
        if sug.add_to_opponent_s is not None:
            wanted[opponent] = float(sug.add_to_opponent_s)
        if sug.remove_from_offender_s is not None:
            wanted[offender] = -float(sug.remove_from_offender_s)
        off = {color: cycle.changed[color] - change for color, change in wanted.items()
               if abs(cycle.changed[color] - change) >= _TIME_TOLERANCE_S}
        if not off:
            return
        self.adjusted.add(irr.id)

        def change(color: chess.Color, seconds: float) -> str:
            return f"{_mmss(seconds)} for {_name(color)}" if abs(seconds) >= _TIME_TOLERANCE_S \
                else f"{_name(color)}'s time unchanged"

        seen = ", ".join(change(color, cycle.changed[color]) for color in (opponent, offender))
        said = []
        if opponent in wanted:
            said.append(f"{_mmss(wanted[opponent])} for {_name(opponent)} (7.5.5)")
        if offender in wanted:
            said.append(f"{_mmss(wanted[offender])} for {_name(offender)}, the increment of the illegal press")
        diff = ", ".join(f"{_name(color)} {_mmss(seconds)}" for color, seconds in off.items())
        text = f"penalty time applied on the clock: {seen}; the suggestion was {' and '.join(said)}: off by {diff}"
        target = self.suggested_times(cycle, irr)
        if target is not None and cycle.base is not None:
            shown = (cycle.base[0] + cycle.changed[chess.WHITE], cycle.base[1] + cycle.changed[chess.BLACK])
            text += (f" (set: White {_hms(shown[0])}, Black {_hms(shown[1])}; suggested: White {_hms(target[0])}, "
                     f"Black {_hms(target[1])})")
        self.e.findings.raise_finding(outs, "ARBITER_ADJUST", None, at, [Evidence(at=at, event="clock")],
                                      incident=irr.id, text=f"{text}; the arbiter's judgement stands (7.1)")
