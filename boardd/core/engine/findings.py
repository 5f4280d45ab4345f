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


#: the illegal-move-class completions judged by ``Presses.illegal_press``, which note ILLEGAL_MOVE_LIMIT_REACHED when
#: the count reaches the limit (the presses, a confirmed two-handed move and a claim do not)
_NO_LIMIT_NOTE = frozenset({"CLOCK_PRESS_NO_MOVE", "CLOCK_PRESS_PIECE_IN_HAND", "TWO_HANDS_AT_PRESS"})


@dataclasses.dataclass(frozen=True, slots=True)
class _Count:
    """An illegal-move-class finding counted for 7.5.5, and what its penalty suggestion was computed from.

    ``penalty`` is the suggestion in the finding now; ``cited`` says that its text was written in the
    configured edition's numbering (``raise_finding``), ``queen`` that 7.5.2's queen replaces the
    reinstatement (a pawn not replaced), ``notes_limit`` that the limit is noted with a finding of its own."""

    side: chess.Color
    code: str
    mate: bool | None
    increment: float
    penalty: PenaltySuggestion
    cited: bool = False
    queen: bool = False
    notes_limit: bool = False


def _queen(pen: PenaltySuggestion) -> PenaltySuggestion:
    """7.5.2 (from 2014): the move stands, the pawn is replaced by a queen (no reinstatement)."""
    return dataclasses.replace(pen, reinstate=False,
                               text=pen.text.replace("reinstate", "the pawn is replaced by a queen (7.5.2)"))


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
        #: the arbiter's ruling of each finding he ruled on (or closed with one he ruled on), kept as written
        self.arbiter_rulings: dict[str, str] = {}
        #: the illegal-move-class findings counted (7.5.5), in the order they were counted
        self.counted: dict[str, _Count] = {}
        #: counted findings the arbiter dismissed (his ruling on it, ``accept`` false, until he upholds it)
        self.dismissed: set[str] = set()
        #: counted findings the engine withdrew (a press explained by a recovered move)
        self.withdrawn: set[str] = set()
        #: the ILLEGAL_MOVE_LIMIT_REACHED noted with a counted finding: finding id -> its id
        self.limits: dict[str, str] = {}
        #: the count of the penalty just suggested, bound to the finding raised with it (``raise_finding``)
        self._pending: _Count | None = None
        self._last_counted: str | None = None

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
        ident = self.new_id()
        severity = facts.severity
        if severity is Severity.ILLEGAL_MOVE and self._handed_back(code, side, incident):
            # no illegal move of his own: the clock handled in the other player's occurrence (7.5.3, T50)
            severity = Severity.WARNING
            text = (f"{text}: " if text else "") + self._handed_back_text(side, incident)
        pending, self._pending = self._pending, None
        if penalty is not None and pending is not None and pending.penalty is penalty:
            self._commit(ident, dataclasses.replace(pending, cited=self.g.edition < 2018))
        elif code == "ILLEGAL_MOVE_LIMIT_REACHED" and self._last_counted is not None \
                and self.counted[self._last_counted].side == side:
            self.limits[self._last_counted] = ident
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
                and before.status is not Status.RESOLVED:
            self._resolve_related(outs, irr)

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
        """``side``'s illegal-move count (rules-spec §6.1: the penalised illegal-move-class events): the findings
        counted, less those the arbiter dismissed or the engine withdrew."""
        return sum(1 for ident, c in self.counted.items() if c.side == side and not self._uncounted(ident))

    def _uncounted(self, ident: str) -> bool:
        return ident in self.dismissed or ident in self.withdrawn

    def _limit(self) -> int:
        return 3 if self.g.edition == 2009 else 2

    def _suggest(self, side: chess.Color, n: int, mate: bool | None, increment: float, *,
                 queen: bool) -> PenaltySuggestion:
        pen = suggest_penalty(edition=self.g.edition, category=Category(self.g.category), regime=Regime(self.g.regime),
                              n=n, offender=side, opp_can_mate=mate, observed_in_window=True,
                              increment_earned_s=increment,
                              blitz_adequate_penalty_2023=self.rules.blitz_adequate_penalty_2023)
        return _queen(pen) if queen and pen.reinstate else pen

    def penalty(self, side: chess.Color, code: str, subtype: str | None = None, *,
                finding: str | None = None) -> PenaltySuggestion | None:
        """Penalty suggestion of an illegal-move-class code, counted once per move (not in the "otherwise"
        regime, where a claim counts it: :meth:`count_claim`).

        The count goes to the finding raised next with this suggestion (``raise_finding``), or to ``finding``
        (a finding ruled an illegal move: a confirmed two-handed move). A press without a move that hands the
        clock back in the other player's incident is no illegal move of the presser (T50): None.
        """
        full = f"{code}/{subtype}" if subtype else code
        self.g.limit_pending = False
        self._pending = None
        if not is_illegal_move_class(full, self.g.edition):
            return None
        if finding is None and self._handed_back(code, side, self.incident_for(code, side)):
            return None
        n = self.count(side) + 1
        mate = can_mate_in_feed(self.g.board, not side)
        queen = code == "PAWN_NOT_REPLACED" and self.g.edition >= 2014
        pen = self._suggest(side, n, mate, self.g.increment, queen=queen)
        if self.g.regime != Regime.OTHERWISE.value:
            counted = _Count(side=side, code=full, mate=mate, increment=self.g.increment, penalty=pen, queen=queen,
                             notes_limit=finding is None and code not in _NO_LIMIT_NOTE)
            if finding is None:
                self._pending = counted
            else:
                self._commit(finding, counted)
        self.g.limit_pending = pen.result is not None and n >= self._limit()
        self.g.limit_mate = mate
        return pen

    def count_claim(self, irr: Irregularity, side: chess.Color) -> PenaltySuggestion:
        """The "otherwise" regime: the opponent's claim (or the arbiter) in the window counts ``irr`` (R22)."""
        n = self.count(side) + 1
        mate = can_mate_in_feed(self.g.board, not side)
        pen = self._suggest(side, n, mate, self.g.increment, queen=False)
        full = f"{irr.code}/{irr.subtype}" if irr.subtype else irr.code
        self._commit(irr.id, _Count(side=side, code=full, mate=mate, increment=self.g.increment, penalty=pen))
        return pen

    def _commit(self, ident: str, counted: _Count) -> None:
        self.counted[ident] = counted
        self._last_counted = ident

    def withdraw_count(self, outs: list[Output], irr_id: str, at: float) -> None:
        """A counted finding withdrawn by the engine (a press explained by a recovered move): uncounted."""
        if irr_id in self.counted and not self._uncounted(irr_id):
            self.withdrawn.add(irr_id)
            self._recount(outs, self.counted[irr_id].side, at)

    def on_ruling(self, outs: list[Output], irr_id: str, *, accept: bool, at: float) -> None:
        """The arbiter ruled on ``irr_id``: dismissed (``accept`` false), it is no illegal move and is uncounted;
        upheld (a dismissal reversed), it counts again. The findings of the player's count raised after it that
        still await a ruling get the suggestion of their count given this ruling (republished), and so does the
        ILLEGAL_MOVE_LIMIT_REACHED noted with them (withdrawn, or noted again); the state's count changes.

        Only the finding ruled on: a ruling on another finding says nothing of this one (a two-handed move
        dismissed leaves the illegal move of the same press counted)."""
        counted = self.counted.get(irr_id)
        if counted is None or irr_id in self.withdrawn or (irr_id in self.dismissed) == (not accept):
            return
        if accept:
            self.dismissed.discard(irr_id)
        else:
            self.dismissed.add(irr_id)
        self._recount(outs, counted.side, at)
        outs.append(StateChanged(at=at))

    def _recount(self, outs: list[Output], side: chess.Color, at: float) -> None:
        """The suggestions of ``side``'s counted findings awaiting a ruling, after their count changed, and the
        ILLEGAL_MOVE_LIMIT_REACHED noted with them (withdrawn with a finding no longer counted).

        A finding already ruled on keeps the suggestion it was ruled on (the arbiter applied it, or not)."""
        n = 0
        for ident, counted in list(self.counted.items()):
            irr = self.g.irr.get(ident)
            if counted.side != side or irr is None:
                continue
            if self._uncounted(ident):
                if counted.notes_limit:
                    self._note_limit(outs, irr, reached=False, mate=counted.mate, at=at,
                                     why=f"{ident} {'dismissed' if ident in self.dismissed else 'withdrawn'}")
                continue
            n += 1
            pen = counted.penalty
            if irr.status in (Status.OPEN, Status.ACKNOWLEDGED):
                pen = self._suggest(side, n, counted.mate, counted.increment, queen=counted.queen)
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
            if counted.notes_limit:
                self._note_limit(outs, irr, reached=pen.result is not None and n >= self._limit(), mate=counted.mate,
                                 at=at, why=f"after the arbiter's ruling {ident} is not {_name(side)}'s "
                                            f"{'3rd' if self._limit() == 3 else '2nd'} illegal move")

    def _note_limit(self, outs: list[Output], irr: Irregularity, *, reached: bool, mate: bool | None, at: float,
                    why: str) -> None:
        """ILLEGAL_MOVE_LIMIT_REACHED with ``irr`` after its count changed: withdrawn, noted again, or raised."""
        ident = self.limits.get(irr.id)
        note = self.g.irr.get(ident) if ident is not None else None
        if note is not None and not reached and note.status is Status.NOTED:
            self.update_finding(outs, dataclasses.replace(note, status=Status.RESOLVED, ruling=f"withdrawn: {why}"))
        elif note is not None and reached and note.status is Status.RESOLVED:
            self.update_finding(outs, dataclasses.replace(note, status=Status.NOTED, ruling=None,
                                                          suggestion=dataclasses.replace(
                                                              note.suggestion, result=irr.suggestion.result)))
        elif note is None and reached and irr.side is not None:
            self._last_counted = irr.id
            self.raise_finding(outs, "ILLEGAL_MOVE_LIMIT_REACHED", irr.side, at, [],
                               incident=irr.incident or irr.id, result=irr.suggestion.result,
                               text=self.limit_text(irr.suggestion.result, mate))

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
                self.raise_finding(outs, "ILLEGAL_MOVE_STANDS", win.offender, at, [], incident=irr.incident or irr.id,
                            text=f"no claim or ruling before the opponent's move was made: {irr.code} stands")
        self.g.claim_windows = keep
