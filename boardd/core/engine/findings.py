"""Findings: ids, raise, update, status, penalties, claim windows (rules-spec §4, §5)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

import chess

from boardd.core.engine.common import _LOGGER, _Window
from boardd.core.laws.articles import cite_all
from boardd.core.laws.codes import code_info, is_illegal_move_class
from boardd.core.laws.penalties import PenaltySuggestion, suggest_penalty
from boardd.core.laws.positions import can_mate_in_feed
from boardd.core.outputs import (
    Evidence,
    Irregularity,
    IrregularityRaised,
    IrregularityUpdated,
    Output,
    Severity,
    StateChanged,
    Status,
    Suggestion,
)
from boardd.core.settings import Category, Regime

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine


#: codes whose Appendix A articles apply only in the rapid/blitz "otherwise" regime
_APPENDIX_A_OTHERWISE = frozenset({"FLAG_FALL", "BOTH_FLAGS_FALLEN"})


#: The other player's findings that follow from an incident instead of being an occurrence of their own, by the
#: code of the incident's primary: a press without a move that hands the clock back to the player whose act is
#: unfinished on the board (the knight taken back on the opponent's time and the clock handed back, a takeback by
#: agreement, rules-spec T50; a press with no move or with a piece still in hand pressed back). One occurrence,
#: one alert: the arbiter rules on the act, not twice on the clock handled with it.
_FOLLOWS_FROM: dict[str, frozenset[str]] = {
    "CLOCK_PRESS_NO_MOVE": frozenset({"OUT_OF_TURN_CHANGE", "TAKEBACK_DETECTED", "CLOCK_PRESS_NO_MOVE",
                                      "CLOCK_PRESS_PIECE_IN_HAND"}),
}

#: how far back (plies) a finding raised late (withheld, then published) may sit among the findings
_SCAN_PLIES = 10


@dataclasses.dataclass(frozen=True, slots=True)
class _Count:
    """An illegal-move-class finding counted for 7.5.5, and what its penalty suggestion was computed from.

    ``penalty`` is the suggestion in the finding now; ``cited`` says that its text was written in the
    configured edition's numbering (``raise_finding``), ``queen`` that 7.5.2's queen replaces the
    reinstatement (a pawn not replaced). ``move`` is the move it belongs to (the id of that move's first
    finding, :meth:`Findings.open_move`): the findings of one move count once."""

    side: chess.Color
    code: str
    mate: bool | None
    increment: float
    penalty: PenaltySuggestion
    cited: bool = False
    queen: bool = False
    move: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class _Move:
    """One move of a player's for the count (rules-spec 3.5: once per move): the position it was made from (the
    record's length), when its first finding was raised, and its findings."""

    side: chess.Color
    ply: int
    since: float
    findings: list[str]


def _queen(pen: PenaltySuggestion) -> PenaltySuggestion:
    """7.5.2 (from 2014): the move stands, the pawn is replaced by a queen (no reinstatement)."""
    return dataclasses.replace(pen, reinstate=False,
                               text=pen.text.replace("reinstate", "the pawn is replaced by a queen (7.5.2)"))


def _once(pen: PenaltySuggestion, first: str) -> PenaltySuggestion:
    """A later finding of a move already counted with ``first`` (rules-spec 3.5; Arbiters' Manual: two
    irregularities in one move count as one): the move's penalty (7.5.5: the time to the opponent, or the loss at
    the limit) is suggested once, on ``first``; this one carries none. The position is still reinstated (7.5.1)
    and the increment of its own press removed (R21)."""
    parts = [f"counted once with {first}, the same move (Arbiters' Manual): the move's penalty is suggested "
             f"on {first}, not again here"]
    if pen.remove_from_offender_s is not None:
        parts.append(f"remove the {pen.remove_from_offender_s:g} s increment of this press")
    if pen.reinstate:
        parts.append("reinstate")
    return dataclasses.replace(pen, add_to_opponent_s=None, result=None, text="; ".join(parts))


def carries_penalty(pen: PenaltySuggestion) -> bool:
    """Does the suggestion carry a move's penalty (time to the opponent, or a result)?"""
    return pen.add_to_opponent_s is not None or pen.result is not None


def _name(side: chess.Color) -> str:
    return "White" if side == chess.WHITE else "Black"


def _resolved_with(ruled: Irregularity) -> str:
    """The ruling of a finding closed with *ruled* (one incident, one status)."""
    return f"resolved with {ruled.id}" + (f": {ruled.ruling}" if ruled.ruling else "")


class Findings:
    """Findings: ids, raise, update, status, penalties, claim windows (rules-spec §4, §5)."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        self.rules = e.rules
        #: the finding the arbiter rules on while his command is applied (his words are its ruling, and those of
        #: the findings closed with it), else None
        self.arbiter: str | None = None
        #: the finding the arbiter is ruling on alone (``Resolve.alone``): the findings of its incident stay open
        self.alone: str | None = None
        #: the arbiter's ruling of each finding he ruled on (or closed with one he ruled on), kept as written
        self.arbiter_rulings: dict[str, str] = {}
        #: the illegal-move-class findings counted (7.5.5), in the order they were counted
        self.counted: dict[str, _Count] = {}
        #: counted findings the arbiter dismissed (his ruling on it, ``accept`` false, until he upholds it)
        self.dismissed: set[str] = set()
        #: counted findings the engine withdrew (a press explained by a recovered move)
        self.withdrawn: set[str] = set()
        #: the counted findings a dismissal of another finding closed with it (that finding's id -> theirs)
        self.dismissed_with: dict[str, set[str]] = {}
        #: counted findings the arbiter upheld while they carried their move's penalty: he applied it from them
        #: (it stays with them when the count changes: a dismissal taken back does not suggest it again elsewhere)
        self.applied: set[str] = set()
        #: the ILLEGAL_MOVE_LIMIT_REACHED noted with a move (its first finding's id) -> the note's id
        self.limits: dict[str, str] = {}
        #: the moves of the illegal-move-class findings (their first finding's id -> the move), and each
        #: player's latest; the move of each finding raised with a penalty (also those a claim counts later)
        self.moves: dict[str, _Move] = {}
        self._latest: dict[chess.Color, str] = {}
        #: the findings of the "otherwise" regime awaiting a claim (R22), with what their count is computed from
        self._unclaimed: dict[str, _Count] = {}
        #: when the clock was last paused (the arbiter at the board, 6.11.2): an action between two findings
        self._paused_at = float("-inf")
        #: the count of the penalty just suggested, bound to the finding raised with it (``raise_finding``), and
        #: whether it counts now (not in the "otherwise" regime, where a claim counts it)
        self._pending: tuple[_Count, bool, int] | None = None

    def new_id(self) -> str:
        self.g.irr_counter += 1
        return f"{len(self.g.records)}-{self.g.irr_counter}"

    def raise_finding(self, outs: list[Output], code: str, side: chess.Color | None, at: float,
               evidence: Iterable[Evidence] = (), *, subtype: str | None = None, text: str = "",
               move: str | None = None, reinstate_ply: int | None = None, constraints: tuple[str, ...] = (),
               verify: bool = False, result: str | None = None, add_s: int | None = None,
               remove_s: float | None = None, claim_deadline: float | None = None,
               first_at: float | None = None, penalty: PenaltySuggestion | None = None,
               incident: str | None = None, articles: tuple[str, ...] | None = None,
               related: tuple[str, ...] = ()) -> Irregularity:
        """Raise a finding; it joins the incident under way (or ``incident``), else opens one (contract ``incident``).

        Info findings are ``noted``: a log entry that asks for no action and never opens an incident.
        """
        full = f"{code}/{subtype}" if subtype else code
        if penalty is not None:
            add_s = penalty.add_to_opponent_s
            remove_s = penalty.remove_from_offender_s
            result = penalty.result
            text = f"{text}: {penalty.text}" if text else penalty.text
            if reinstate_ply is None and not penalty.stands:
                reinstate_ply = len(self.g.records)
        facts = code_info(full, self.g.edition)
        if articles is None and code in _APPENDIX_A_OTHERWISE and self.g.regime != Regime.OTHERWISE.value:
            # the Appendix A rules cited for these codes are those of play without adequate supervision
            articles = tuple(a for a in facts.articles if not a.startswith("A.")) or facts.articles
        ev = tuple(evidence)
        info = facts.severity is Severity.INFO
        if self.g.edition < 2018:
            # the texts name articles in the 2018/2023 numbering: cite the configured edition's
            text = cite_all(text, self.g.edition)
            constraints = tuple(cite_all(c, self.g.edition) for c in constraints)
        if incident is None:
            incident = self.incident_for(code, side)
        if incident is None and info:
            # a note during an arbiter's correction (a piece adjusted or parked on the way, the clock paused after
            # the board was put right) is a step of that incident, not an item of its own (one incident, one alert)
            incident = self.e.correction.incident(at)
        ident = self.new_id()
        severity = facts.severity
        if severity is Severity.ILLEGAL_MOVE and self._handed_back(code, side, incident):
            # no illegal move of his own: the clock handled in the other player's occurrence (7.5.3, T50)
            severity = Severity.WARNING
            text = (f"{text}: " if text else "") + self._handed_back_text(side, incident)
        pending, self._pending = self._pending, None
        bound = penalty is not None and pending is not None and pending[0].penalty is penalty
        if bound:
            assert pending is not None and side is not None
            counted = dataclasses.replace(pending[0], cited=self.g.edition < 2018,
                                          move=self._join(ident, side, pending[0].move, pending[2], at))
            if pending[1]:
                self._commit(ident, counted)
            else:  # R22: a claim (or the arbiter) before the opponent's next move counts it, any 7.5.1-7.5.4 act
                self._unclaimed[ident] = counted
                self.g.claim_windows.append(_Window(ident, side))
        withheld = self.e.correction.withholds(code)
        if incident is None and not info and not withheld:
            self.g.incident = (ident, len(self.g.records))
        irr = Irregularity(
            id=ident, incident=incident, status=Status.NOTED if info else Status.OPEN, code=code,
            severity=severity, confidence=facts.confidence, side=side,
            ply=len(self.g.records), edition=self.g.edition,
            articles=articles if articles is not None else facts.articles, t_raised=at,
            t_first_evidence=first_at if first_at is not None else (ev[0].at if ev else at), evidence=ev,
            subtype=subtype, suggestion=Suggestion(text=text, move=move, add_to_opponent_s=add_s,
                                                  remove_from_offender_s=remove_s, result=result,
                                                  reinstate_ply=reinstate_ply, constraints=constraints,
                                                  verify=verify),
            claim_deadline=claim_deadline, category=self.g.category, regime=self.g.regime, related=related)
        if withheld:
            self.e.correction.withhold(irr)  # published if the board does not go back to the position
            return irr
        self.publish(outs, irr)
        if bound and ident in self.counted:
            self._note_reached(outs, irr, self.counted[ident], at)
        return irr

    def publish(self, outs: list[Output], irr: Irregularity) -> None:
        """A finding into the game's findings and out (raised now, or withheld until now)."""
        self.g.irr[irr.id] = irr
        if irr.severity is Severity.ILLEGAL_MOVE and irr.ply > self.g.illegal_ply:
            self.g.illegal_ply = irr.ply
        outs.append(IrregularityRaised(irregularity=irr))
        level = logging.INFO if irr.severity is Severity.INFO else logging.WARNING
        full = f"{irr.code}/{irr.subtype}" if irr.subtype else irr.code
        _LOGGER.log(level, "%s %s side=%s ply=%d at=%.3f", irr.id, full, irr.side, irr.ply, irr.t_raised)

    def current_incident(self) -> str | None:
        """The primary finding of the incident under way: raised at most one completed move ago, not resolved."""
        if self.g.incident is None:
            return None
        primary, ply = self.g.incident
        found = self.g.irr.get(primary)
        if len(self.g.records) > ply + 1 or found is None or found.status is Status.RESOLVED:
            # moved on, or closed (resolved by the board or the arbiter): what comes next is a new incident
            self.g.incident = None
            return None
        return primary

    def _handed_back(self, code: str, side: chess.Color | None, incident: str | None) -> bool:
        """Does ``side``'s finding ``code`` joining ``incident`` follow from another player's occurrence
        (:data:`_FOLLOWS_FROM`: the clock handed back to the player whose act is unfinished on the board)?"""
        primary = self.g.irr.get(incident) if incident is not None else None
        return side is not None and primary is not None and primary.side != side \
            and primary.code in _FOLLOWS_FROM.get(code, ())

    def _handed_back_text(self, side: chess.Color | None, incident: str | None) -> str:
        assert side is not None  # (a finding handed back is a player's: _handed_back)
        primary = self.g.irr.get(incident) if incident is not None else None
        whom = "" if primary is None or primary.side is None else f" to {_name(primary.side)}"
        return (f"the clock handed back{whom} in incident {incident}: not an illegal move of {_name(side)} (7.5.3); "
                "the arbiter rules on the incident")

    def incident_for(self, code: str, side: chess.Color | None) -> str | None:
        """The incident a finding of ``side`` joins, or None: it opens one (one occurrence, one alert).

        An incident is one player's occurrence: his move from the first touch to the press and what finishes
        it on the opponent's time (T30's piece in hand, the other hand, the knight put down out of turn). The
        other player's findings are occurrences of their own, ruled on and counted for him (7.5.5; his
        touch-move, his press without a move, his early start, his illegal move or two hands): a ruling on one
        must not close the other's. Only what follows from the incident joins it across players
        (:data:`_FOLLOWS_FROM`, the clock handed back), and findings of no player (a takeback, the board, the
        clock) join the incident under way. A player's finding while the other's incident is the latest joins
        his own incident still under way, if any.
        """
        latest = self.current_incident()
        primary = self.g.irr.get(latest) if latest is not None else None
        if primary is not None and (side is None or primary.side is None or primary.side == side
                                    or primary.code in _FOLLOWS_FROM.get(code, ())):
            return latest
        return None if side is None else self._open_primary(side)

    def _open_primary(self, side: chess.Color) -> str | None:
        """The primary of ``side``'s own incident still under way (at most one completed move ago, not resolved)."""
        now = len(self.g.records)
        for irr in reversed(self.g.irr.values()):
            if irr.ply < now - _SCAN_PLIES:
                break
            if irr.incident is None and irr.side == side and irr.severity is not Severity.INFO \
                    and irr.status is not Status.RESOLVED and irr.ply + 1 >= now:
                return irr.id
        return None

    def update_finding(self, outs: list[Output], update: Irregularity) -> None:
        if self.e.correction.update_withheld(update):
            return
        before = self.g.irr.get(update.id)
        irr = self._keep_arbiter_words(update, before)
        if irr is None:
            return  # the same note again
        self.g.irr[irr.id] = irr
        if irr.severity is Severity.ILLEGAL_MOVE and irr.ply > self.g.illegal_ply:
            self.g.illegal_ply = irr.ply
        outs.append(IrregularityUpdated(irregularity=irr))
        if irr.status is Status.RESOLVED and irr.incident is None and before is not None \
                and before.status is not Status.RESOLVED and irr.id != self.alone:
            self._resolve_related(outs, irr)

    def left_open(self, outs: list[Output], primary: str) -> None:
        """After a ruling on ``primary`` alone (``Resolve.alone``): the findings of its incident that still ask for
        action are published again after it (those the recount did not), so that a consumer folding the incident
        sees them as newer than its primary's ruling: the card stays open, led by them."""
        updates = [o.irregularity.id for o in outs if isinstance(o, IrregularityUpdated)]
        done = set(updates[len(updates) - updates[::-1].index(primary):]) if primary in updates else set()
        for other in list(self.g.irr.values()):
            if other.incident == primary and other.status in (Status.OPEN, Status.ACKNOWLEDGED) \
                    and other.id not in done:
                outs.append(IrregularityUpdated(irregularity=other))

    def _keep_arbiter_words(self, irr: Irregularity, before: Irregularity | None) -> Irregularity | None:
        """The arbiter's ruling stays: a ruling written by the engine afterwards (the board reinstating the
        position, the penalty time seen on the clock) is added after his words, never instead of them.

        Returns the finding to publish, or None when that is exactly what was published already."""
        if irr.ruling is None:
            return irr
        if self._by_arbiter(irr):
            if before is None or irr.ruling != before.ruling:
                self.arbiter_rulings[irr.id] = irr.ruling
            return irr
        words = self.arbiter_rulings.get(irr.id)
        if words is None or irr.ruling == words or irr.ruling.startswith(f"{words}; "):
            return irr
        irr = dataclasses.replace(irr, ruling=f"{words}; {irr.ruling}")
        return None if irr == before else irr

    def _by_arbiter(self, irr: Irregularity) -> bool:
        """Is *irr*'s ruling the arbiter's, written by his command: on the finding he ruled on, or ``resolved with``
        it (or with a finding closed with it)? Not a note the engine writes meanwhile (a reinstatement the ruling
        led to)."""
        if self.arbiter is None or irr.ruling is None:
            return False
        if irr.id == self.arbiter:
            return True
        if not irr.ruling.startswith("resolved with "):
            return False
        other = irr.ruling.removeprefix("resolved with ").split(":", 1)[0]
        return other == self.arbiter or other in self.arbiter_rulings

    def _resolve_related(self, outs: list[Output], primary: Irregularity) -> None:
        """One incident, one status: the findings that joined ``primary`` and still ask for action close with it.

        Consumers fold them under their primary (its status is the incident's), but only the primary has
        the tablet's actions: left open they would stay in the state's ``open_irregularities`` for good, and
        a late joiner (a restarted web service, a new tablet) would show a resolved incident as open. Those
        joining it later (explicitly) are raised after this and keep their own status.
        """
        ruling = _resolved_with(primary)
        for other in list(self.g.irr.values()):
            if other.incident == primary.id and other.status in (Status.OPEN, Status.ACKNOWLEDGED):
                self.g.irr[other.id] = resolved = dataclasses.replace(other, status=Status.RESOLVED, ruling=ruling)
                if self._by_arbiter(resolved):
                    self.arbiter_rulings[other.id] = ruling
                outs.append(IrregularityUpdated(irregularity=resolved))

    def close_two_hands(self, outs: list[Output], resolved: Irregularity) -> None:
        """A TWO_HANDS_AT_PRESS confirmed or dismissed closes its incident as one, whatever its primary.

        The press finding is the one the arbiter rules on (R19; the tablet's Confirm two hands / Dismiss), but
        the incident's primary is another finding: the TWO_HANDS_SUSPECTED raised when the hands were seen, or
        the finding of an incident under way that the suspicion joined (a rook lifted first, an illegal move
        of the move before). Left open, the tablet would keep a card for an incident already ruled on. The
        suspicion the press finding names in ``related`` goes out first, then the incident's primary (each
        ``resolved with <id>: <ruling>``; the findings that joined the primary close with it), then the ruled
        finding: a confirmed one is of severity illegal-move, and shown while its incident was still open it
        would read as a new open illegal move.
        """
        self.g.irr[resolved.id] = resolved  # not closed again below as a related finding of its primary
        ruling = _resolved_with(resolved)
        suspected = [i for i in resolved.related if (f := self.g.irr.get(i)) is not None
                     and f.code == "TWO_HANDS_SUSPECTED"]
        for ident in [*suspected, *([resolved.incident] if resolved.incident else [])]:
            found = self.g.irr.get(ident)
            if found is not None and found.status in (Status.OPEN, Status.ACKNOWLEDGED):
                self.update_finding(outs, dataclasses.replace(found, status=Status.RESOLVED, ruling=ruling))
        self.update_finding(outs, resolved)

    def set_status(self, outs: list[Output], irr_id: str, status: Status, ruling: str | None) -> None:
        irr = self.g.irr.get(irr_id)
        if irr is None:
            _LOGGER.warning("arbiter command for unknown irregularity %s", irr_id)
            return
        if status is Status.ACKNOWLEDGED and irr.status is Status.RESOLVED:
            # Acknowledged on the tablet while the board resolved it (the pieces put back): it stays
            # resolved; as "acknowledged" it would need the arbiter again, a second alert for one incident.
            _LOGGER.info("acknowledgement of %s, already resolved: it stays resolved", irr_id)
            return
        self.update_finding(outs, dataclasses.replace(irr, status=status, ruling=ruling if ruling else irr.ruling))

    # ------------------------------------------------------------------ the illegal-move count (7.5.5)

    def count(self, side: chess.Color) -> int:
        """``side``'s illegal-move count (rules-spec §6.1: the penalised illegal-move-class events, one per move,
        §3.5): his moves with a finding counted, less those the arbiter dismissed or the engine withdrew."""
        if not self.counted:   # (the usual case; the state asks twice a move)
            return 0
        return len({c.move for ident, c in self.counted.items() if c.side == side and not self._uncounted(ident)})

    def _uncounted(self, ident: str) -> bool:
        return ident in self.dismissed or ident in self.withdrawn

    def _limit(self) -> int:
        return 3 if self.g.edition == 2009 else 2

    def intervened(self, at: float) -> None:
        """The clock paused (the arbiter at the board, 6.11.2): what a player does after it is another move."""
        self._paused_at = at

    def open_move(self, side: chess.Color, ply: int) -> str | None:
        """The move of ``side``'s a finding from the position at ``ply`` belongs to, if it is one already under way
        (rules-spec 3.5: once per move; Arbiters' Manual: two irregularities in one move count as one).

        The same move: his latest move with a finding, made from the same position (the opponent has not moved
        since, nor was it reinstated), with no action of the arbiter since its first finding (7.5.5: "after the
        action taken under 7.5.1-7.5.4 for the first completed illegal move ... for the second"): none of its
        findings ruled on or resolved (the board reinstating it), the clock not paused. A press without a move
        handed back by the opponent and then the illegal move pressed, or a press with the piece still in hand
        and then that piece put on an illegal square and pressed, are one move's irregularities."""
        ident = self._latest.get(side)
        move = self.moves.get(ident) if ident is not None else None
        if move is None or move.ply != ply or self._paused_at >= move.since:
            return None
        if any(f is None or f.status is Status.RESOLVED for f in (self.g.irr.get(i) for i in move.findings)):
            return None
        return ident

    def _join(self, ident: str, side: chess.Color, move: str, ply: int, at: float) -> str:
        """``ident`` into ``move`` (``""``: a move of its own, from the position at ``ply``); its move's id."""
        if not move or move not in self.moves:
            self.moves[ident] = _Move(side=side, ply=ply, since=at, findings=[ident])
            self._latest[side] = move = ident
        else:
            self.moves[move].findings.append(ident)
        return move

    def _suggest(self, side: chess.Color, n: int, mate: bool | None, increment: float, *,
                 queen: bool, first: str | None = None) -> PenaltySuggestion:
        """The suggestion of ``side``'s ``n``-th illegal move; ``first``: the finding of the same move it counts
        once with (named in the text)."""
        pen = suggest_penalty(edition=self.g.edition, category=Category(self.g.category), regime=Regime(self.g.regime),
                              n=n, offender=side, opp_can_mate=mate, observed_in_window=True,
                              increment_earned_s=increment,
                              blitz_adequate_penalty_2023=self.rules.blitz_adequate_penalty_2023)
        if first is not None:
            pen = _once(pen, first)
        return _queen(pen) if queen and pen.reinstate else pen

    def _n(self, side: chess.Color, move: str | None) -> tuple[int, str | None]:
        """The count a finding of ``side``'s in ``move`` (None: a move of its own) makes, and the finding of that
        move it counts once with (its first one still counted), if any."""
        first = next((i for i, c in self.counted.items() if move is not None and c.move == move
                      and not self._uncounted(i)), None)
        return (self.count(side), first) if first is not None else (self.count(side) + 1, None)

    def penalty(self, side: chess.Color, code: str, subtype: str | None = None, *,
                finding: str | None = None, ply: int | None = None) -> PenaltySuggestion | None:
        """Penalty suggestion of an illegal-move-class code, counted once per move (not in the "otherwise"
        regime, where a claim counts it: :meth:`count_claim`).

        The count goes to the finding raised next with this suggestion (``raise_finding``), or to ``finding``
        (a finding ruled an illegal move: a confirmed two-handed move, made from the position at ``ply``). A
        finding of a move under way (:meth:`open_move`) counts once with it. A press without a move that hands
        the clock back in the other player's incident is no illegal move of the presser (T50): None.
        """
        full = f"{code}/{subtype}" if subtype else code
        self._pending = None
        if not is_illegal_move_class(full, self.g.edition):
            return None
        if finding is None and self._handed_back(code, side, self.incident_for(code, side)):
            return None
        at_ply = len(self.g.records) if ply is None else ply
        move = self.open_move(side, at_ply)
        n, first = self._n(side, move)
        mate = can_mate_in_feed(self.g.board, not side)
        queen = code == "PAWN_NOT_REPLACED" and self.g.edition >= 2014
        pen = self._suggest(side, n, mate, self.g.increment, queen=queen, first=first)
        counts = self.g.regime != Regime.OTHERWISE.value
        counted = _Count(side=side, code=full, mate=mate, increment=self.g.increment, penalty=pen, queen=queen,
                         move=move or "")
        if finding is None:
            self._pending = (counted, counts, at_ply)
        elif counts:
            self._commit(finding, dataclasses.replace(counted, move=self._join(finding, side, move or "", at_ply,
                                                                               self._now(finding))))
        return pen

    def _now(self, ident: str) -> float:
        found = self.g.irr.get(ident)
        return found.t_raised if found is not None else float("-inf")

    def count_claim(self, irr: Irregularity, side: chess.Color) -> PenaltySuggestion:
        """The "otherwise" regime: the opponent's claim (or the arbiter) in the window counts ``irr`` (R22), once
        per move (the move it was raised in); the caller notes the limit (E2014 A.4 b: the first) after it."""
        raised = self._unclaimed.pop(irr.id, None)
        move = raised.move if raised is not None else self._join(irr.id, side, "", irr.ply, irr.t_raised)
        n, first = self._n(side, move)
        mate = can_mate_in_feed(self.g.board, not side)
        pen = self._suggest(side, n, mate, self.g.increment, queen=False, first=first)
        full = f"{irr.code}/{irr.subtype}" if irr.subtype else irr.code
        counted = _Count(side=side, code=full, mate=mate, increment=self.g.increment, penalty=pen, move=move)
        self._commit(irr.id, counted)
        return pen

    def _commit(self, ident: str, counted: _Count) -> None:
        self.counted[ident] = counted

    def note_limit(self, outs: list[Output], irr_id: str, at: float) -> None:
        """After a finding counted by a ruling (a claim, a confirmed two-handed move) went out with its suggestion:
        ILLEGAL_MOVE_LIMIT_REACHED if it reached the limit."""
        irr = self.g.irr.get(irr_id)
        if irr is not None and irr_id in self.counted and not self._uncounted(irr_id):
            self._note_reached(outs, irr, self.counted[irr_id], at)

    def _note_reached(self, outs: list[Output], irr: Irregularity, counted: _Count, at: float) -> None:
        """ILLEGAL_MOVE_LIMIT_REACHED with a counted finding whose suggestion is the loss (the count reached the
        limit), once per move: not again with a second finding of a move that noted it."""
        if counted.penalty.result is None or counted.move in self.limits:
            return
        note = self.raise_finding(outs, "ILLEGAL_MOVE_LIMIT_REACHED", counted.side, at, irr.evidence[-1:],
                                  incident=irr.incident or irr.id, result=counted.penalty.result,
                                  text=self.limit_text(counted.penalty.result, counted.mate))
        self.limits[counted.move] = note.id

    def withdraw_count(self, outs: list[Output], irr_id: str, at: float) -> None:
        """A counted finding withdrawn by the engine (a press explained by a recovered move): uncounted."""
        if irr_id in self.counted and not self._uncounted(irr_id):
            self.withdrawn.add(irr_id)
            self._recount(outs, self.counted[irr_id].side, at)

    def upheld(self, irr_id: str) -> None:
        """The arbiter upholds ``irr_id`` (``Resolve`` with ``accept``): carrying its move's penalty now (counted),
        he applies it from this card; the penalty stays with it (:meth:`_recount`)."""
        counted = self.counted.get(irr_id)
        if counted is not None and not self._uncounted(irr_id) and carries_penalty(counted.penalty):
            self.applied.add(irr_id)

    def on_ruling(self, outs: list[Output], irr_id: str, *, accept: bool, at: float,
                  closed: Iterable[str] = ()) -> None:
        """The arbiter ruled on ``irr_id``: dismissed (``accept`` false), it is no illegal move and is uncounted,
        and so are the counted findings the dismissal closed with it (``closed``: "resolved with" it, the
        incident the arbiter sees dismissed on his card; their correction cycle ends with it,
        :meth:`Correction.ruled`); upheld (a dismissal reversed), they count again. The findings of the player's
        count raised after it that still await a ruling get the suggestion of their count given this ruling
        (republished), and so does the ILLEGAL_MOVE_LIMIT_REACHED noted with them (withdrawn, or noted again);
        the state's count changes."""
        if accept:
            ids = {irr_id, *self.dismissed_with.pop(irr_id, set())} & self.dismissed
            self.dismissed -= ids
        else:
            self.applied.discard(irr_id)
            ids = {i for i in (irr_id, *closed) if i in self.counted and i not in self.withdrawn} - self.dismissed
            self.dismissed |= ids
            if ids - {irr_id}:
                self.dismissed_with[irr_id] = ids - {irr_id}
        ids = {i for i in ids if i in self.counted}
        if not ids:
            return
        for side in sorted({self.counted[i].side for i in ids}):
            self._recount(outs, side, at)
        outs.append(StateChanged(at=at))

    def _recount(self, outs: list[Output], side: chess.Color, at: float) -> None:
        """The suggestions of ``side``'s counted findings awaiting a ruling, after their count changed (one per
        move), and the ILLEGAL_MOVE_LIMIT_REACHED noted with their moves (withdrawn with a move no longer
        counted, or no longer reaching the limit).

        A finding already ruled on keeps the suggestion it was ruled on (the arbiter applied it, or not)."""
        numbers: dict[str, tuple[int, str]] = {}  # move -> its count, its first finding still counted
        reached: dict[str, tuple[bool, Irregularity | None, bool | None]] = {}
        # the move's penalty stays where the arbiter applied it (upheld while it carried it), else its first
        applied = {self.counted[i].move: i for i in self.applied if i in self.counted and not self._uncounted(i)}
        for ident, counted in list(self.counted.items()):
            irr = self.g.irr.get(ident)
            if counted.side != side or irr is None:
                continue
            reached.setdefault(counted.move, (False, None, counted.mate))
            if self._uncounted(ident):
                continue
            if counted.move not in numbers:
                numbers[counted.move] = (len(numbers) + 1, applied.get(counted.move, ident))
            n, first = numbers[counted.move]
            pen = counted.penalty
            # the move's penalty moves with its first finding still counted (the first dismissed, or reopened),
            # also onto (or off) a finding ruled on while another finding of its move carried it
            if irr.status in (Status.OPEN, Status.ACKNOWLEDGED) or carries_penalty(pen) != (first == ident):
                pen = self._suggest(side, n, counted.mate, counted.increment, queen=counted.queen,
                                    first=None if first == ident else first)
            if pen != counted.penalty:
                self.counted[ident] = dataclasses.replace(counted, penalty=pen)
                old, new = counted.penalty.text, pen.text
                if counted.cited:
                    old, new = cite_all(old, self.g.edition), cite_all(new, self.g.edition)
                sug = dataclasses.replace(irr.suggestion, add_to_opponent_s=pen.add_to_opponent_s, result=pen.result,
                                          remove_from_offender_s=pen.remove_from_offender_s,
                                          text=irr.suggestion.text.replace(old, new))
                irr = dataclasses.replace(irr, suggestion=sug)
                self.update_finding(outs, irr)
            now = pen.result is not None and (n >= self._limit() or self.g.regime == Regime.OTHERWISE.value)
            if not reached[counted.move][0]:
                reached[counted.move] = (now, irr, counted.mate)
        for move, (now, irr, mate) in reached.items():
            why = (f"after the arbiter's ruling {move} is not {_name(side)}'s "
                   f"{'3rd' if self._limit() == 3 else '2nd'} illegal move" if move in numbers
                   else f"{move} {'withdrawn' if move in self.withdrawn else 'dismissed'}")
            self._note_limit(outs, move, irr, reached=now, mate=mate, at=at, why=why)

    def _note_limit(self, outs: list[Output], move: str, irr: Irregularity | None, *, reached: bool,
                    mate: bool | None, at: float, why: str) -> None:
        """ILLEGAL_MOVE_LIMIT_REACHED of ``move`` after its count changed: withdrawn, noted again, or raised (with
        ``irr``, its finding that reaches the limit)."""
        ident = self.limits.get(move)
        note = self.g.irr.get(ident) if ident is not None else None
        if note is not None and not reached and note.status is Status.NOTED:
            self.update_finding(outs, dataclasses.replace(note, status=Status.RESOLVED, ruling=f"withdrawn: {why}"))
        elif note is not None and reached and note.status is Status.RESOLVED and irr is not None:
            self.update_finding(outs, dataclasses.replace(note, status=Status.NOTED, ruling=None,
                                                          suggestion=dataclasses.replace(
                                                              note.suggestion, result=irr.suggestion.result)))
        elif note is None and reached and irr is not None and irr.side is not None:
            self._note_reached(outs, irr, self.counted[irr.id], at)

    @staticmethod
    def limit_text(result: str | None, mate: bool | None) -> str:
        return ("the illegal-move count reached the limit"
                + (": draw, the opponent cannot mate" if result == "1/2-1/2" else
                   ": loss unless the arbiter finds that the opponent cannot mate" if mate is None else ""))

    def close_claim_windows(self, outs: list[Output], mover: chess.Color, at: float) -> None:
        """R22: the opponent's next MADE move closes the claim window of an illegal move."""
        keep: list[_Window] = []
        for win in self.g.claim_windows:
            if win.offender == mover:
                keep.append(win)
                continue
            irr = self.g.irr.get(win.irregularity_id)
            if irr is not None and irr.status is not Status.RESOLVED and not win.claimed:
                stands = self.raise_finding(outs, "ILLEGAL_MOVE_STANDS", win.offender, at, [],
                                            incident=irr.incident or irr.id,
                                            text=f"no claim or ruling before the opponent's move was made: "
                                                 f"{irr.code} stands")
                # the window closed: the arbiter no longer acts on it (only the players' agreement corrects it, A.5.2),
                # so the finding asks for no action any more: closed with the ruling of the Laws, once
                self.update_finding(outs, dataclasses.replace(
                    irr, status=Status.RESOLVED,
                    ruling=f"the illegal move stands: no claim or ruling before the opponent's move was made "
                           f"({', '.join(stands.articles)})"))
        self.g.claim_windows = keep
