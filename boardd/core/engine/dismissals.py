"""The arbiter's dismissals, and taking one back (``Reopen``): a Dismiss pressed by mistake.

A dismissal is a ``Resolve`` with ``accept`` false: the finding ruled on is no irregularity (a press without a
move judged a distraction, a suspected illegal move a sensor fault, a two-handed move that was one hand). It
closes the finding and what closes with it (the incident's findings ``resolved with`` it, the suspicion of a
two-handed press) and uncounts a counted finding (:meth:`Findings.on_ruling`). Taken back, those findings are
what they were before it (open or acknowledged, their ruling, the arbiter's words kept for them) and a counted
one counts again, the later findings' penalty suggestions and the limit note following (the same recount as a
reversal). What the dismissal ended on the board is put back too, as long as nothing was played since (the
record is the one the dismissal left): a reinstatement it withdrew is awaited again (its moves taken back again),
the correction cycle of the illegal move (the board put back is its reinstatement, the lever the arbiter's
restart), its 7.5.2 fix and its replacement under touch-move. Seed 004 on 7.5.1: an illegal move cannot stay on
the board; the arbiter who takes back his dismissal has found it was one. Once the game went on, he reinstates
from the reopened card (7.5.1, found later).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from boardd.core.engine.common import _LOGGER
from boardd.core.events import Reopen, Resolve
from boardd.core.outputs import Irregularity, Output, StateChanged, Status

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine

#: what a Resolve may change, taken before it: the findings, the arbiter's words kept for them, and what it may end
#: on the board (the correction cycle and what goes with it, the ply of an awaited reinstatement)
Before = tuple[dict[str, Irregularity], dict[str, str], "_Board"]


@dataclasses.dataclass(frozen=True, slots=True)
class _Board:
    """What a dismissal may end on the board: the correction cycle (with the pieces held off its position, the
    7.5.2 fix, the replacement under touch-move) and the reinstatement awaited (its ply)."""

    cycle: Any | None                 # Correction.cycle (a _Cycle)
    held: dict[int, Any]              # Correction.held
    pending_fix: Any | None           # Game.pending_fix
    replacement: Any | None           # Game.replacement
    replacement_due: Any | None       # Game.replacement_due
    awaited: int | None                  # Restoration.awaited's ply


@dataclasses.dataclass(frozen=True, slots=True)
class _Dismissal:
    """What one dismissal closed: the findings as they were before it, and the arbiter's words kept for them."""

    findings: tuple[Irregularity, ...]
    words: dict[str, str]
    #: what it ended on the board (None: nothing), and the record it left (what it ended is put back on that record)
    ended: _Board | None = None
    record: tuple[str, ...] = ()


class Dismissals:
    """The arbiter's dismissals of this game that he may take back (``Reopen``)."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        #: finding ruled on -> what its dismissal closed (until taken back, or upheld by a later ruling)
        self.taken: dict[str, _Dismissal] = {}

    def before(self) -> Before:
        """What a ``Resolve`` about to be applied may change."""
        correction, awaited = self.e.correction, self.e.restoration.awaited
        board = _Board(cycle=correction.cycle, held=dict(correction.held), pending_fix=self.g.pending_fix,
                       replacement=self.g.replacement, replacement_due=self.g.replacement_due,
                       awaited=None if awaited is None else awaited[0])
        return dict(self.g.irr), dict(self.e.findings.arbiter_rulings), board

    def ruled(self, event: Resolve, before: Before) -> None:
        """After a ``Resolve``: a dismissal is remembered; a ruling that upholds the finding forgets one."""
        ident = event.irregularity_id
        if event.accept:
            self.taken.pop(ident, None)
            return
        irrs, words, board = before
        if ident not in irrs:
            return
        closed = tuple(prior for key, prior in irrs.items()
                       if (now := self.g.irr.get(key)) is not None and self._closed_by_it(key == ident, prior, now))
        if closed or ident not in self.taken:
            self.taken[ident] = _Dismissal(findings=closed, words={f.id: words[f.id] for f in closed if f.id in words},
                                           ended=self._ended(board), record=self._record())

    def _record(self) -> tuple[str, ...]:
        return tuple(rec.uci for rec in self.g.records)

    def _ended(self, board: _Board) -> _Board | None:
        """What the dismissal ended on the board (the cycle, the awaited reinstatement), or None."""
        correction = self.e.correction
        withdrawn = board.awaited is not None and self.e.restoration.awaited is None
        ended = board.cycle is not None and correction.cycle is None
        if not withdrawn and not ended:
            return None
        return dataclasses.replace(board, awaited=board.awaited if withdrawn else None,
                                   cycle=board.cycle if ended else None)

    @staticmethod
    def _closed_by_it(ruled: bool, prior: Irregularity, now: Irregularity) -> bool:
        """Did the dismissal close (or, on the finding ruled on, rewrite) this finding? Not a note it withdrew
        (a limit note follows the count, the wait's finding the withdrawn reinstatement)."""
        if ruled:
            return (now.status, now.ruling) != (prior.status, prior.ruling)
        return prior.status in (Status.OPEN, Status.ACKNOWLEDGED) and now.status is Status.RESOLVED \
            and not (now.ruling or "").startswith("withdrawn:")

    def retractable(self) -> tuple[Irregularity, ...]:
        """The dismissed findings a ``Reopen`` can take back now (the state's ``dismissed``), in dismissal order."""
        return tuple(irr for ident in self.taken if self.reopen_error(ident) is None
                     and (irr := self.g.irr.get(ident)) is not None)

    def reopen_error(self, ident: str) -> str | None:
        """Why a ``reopen`` of ``ident`` cannot be applied (None: it can)."""
        irr = self.g.irr.get(ident)
        if irr is None:
            return f"unknown irregularity {ident!r}"
        if ident not in self.taken:
            return f"irregularity {ident} was not dismissed by the arbiter: no dismissal to take back"
        if irr.status is not Status.RESOLVED:
            return f"irregularity {ident} is {irr.status.value} again: no dismissal to take back"
        return None

    def reopen(self, outs: list[Output], event: Reopen, at: float) -> None:
        """Take back the dismissal of ``event.irregularity_id``: what it closed is as before, the count follows."""
        ident = event.irregularity_id
        error = self.reopen_error(ident)
        if error is not None:
            _LOGGER.warning("reopen refused: %s", error)
            return
        taken = self.taken.pop(ident)
        findings = self.e.findings
        for prior in taken.findings:
            now = self.g.irr.get(prior.id)
            if now is None:
                continue
            words = taken.words.get(prior.id)
            if words is None:
                findings.arbiter_rulings.pop(prior.id, None)
            else:
                findings.arbiter_rulings[prior.id] = words
            findings.update_finding(outs, dataclasses.replace(now, status=prior.status, ruling=prior.ruling))
        counted_again = ident in findings.dismissed
        findings.on_ruling(outs, ident, accept=True, at=at)  # it counts again (StateChanged with it)
        if taken.ended is not None and taken.record == self._record():
            self._put_back(outs, taken.ended, at)
        elif taken.ended is not None:
            _LOGGER.info("reopen of %s: played on since its dismissal; what it ended on the board stays ended", ident)
        if not counted_again:
            outs.append(StateChanged(at=at))

    def _put_back(self, outs: list[Output], ended: _Board, at: float) -> None:
        """What the dismissal ended on the board, on the record it left: the reinstatement awaited again (its moves
        taken back again), else the correction cycle with its fix and its replacement under touch-move."""
        g, correction = self.g, self.e.correction
        if ended.awaited is not None:
            self.e.restoration.on_reinstate(outs, ended.awaited, at)
            return
        if ended.cycle is None or correction.cycle is not None:
            return
        correction.cycle = ended.cycle
        correction.held = dict(ended.held)
        if g.pending_fix is None:
            g.pending_fix = ended.pending_fix
        if g.replacement is None:
            g.replacement = ended.replacement
        if g.replacement_due is None:
            g.replacement_due = ended.replacement_due
