"""Link outages (rules-spec §3.6): the board or clock link down, presses recorded but not judged."""

from __future__ import annotations

from typing import TYPE_CHECKING

from boardd.core.engine.common import _LOGGER, _BlindPress, _Press
from boardd.core.engine.modes import LinkTrigger
from boardd.core.events import (
    Link,
    LinkChanged,
)
from boardd.core.outputs import (
    ClockState,
    ClockUpdate,
    Completion,
    GameEvent,
    LinkUpdate,
    Output,
    StateChanged,
    Status,
)

if TYPE_CHECKING:
    from boardd.core.engine.facade import Engine


class Links:
    """Link outages (rules-spec §3.6): the board or clock link down, presses recorded but not judged."""

    def __init__(self, e: Engine) -> None:
        self.e = e
        self.g = e.g
        self.rules = e.rules
        self.blind_count = 0  # presses seen during the outage (reported when the board is back)

    def board_back(self, outs: list[Output], at: float) -> None:
        """The board reports again after an outage: the presses seen meanwhile are settled.

        The reconciling dump (:meth:`Restoration.forward_jump`) has given the matching ones to the recovered moves; the
        rest are dropped. None was judged: what the board could not see accuses no one. One ``GameEvent
        PRESSES_NOT_JUDGED`` says how many there were and how many completed a recovered move.
        """
        self.g.board_link.fire(LinkTrigger.DEVICE_REPORTS)
        presses = self.blind_count
        if presses:
            outs.append(GameEvent(at=at, type="PRESSES_NOT_JUDGED", code=None,
                                  details={"presses": presses, "matched": self.g.blind_matched,
                                           "reason": "board link down"}))
            _LOGGER.info("board back: %d press(es) during the outage not judged, %d matched to recovered moves",
                         presses, self.g.blind_matched)
        self.g.blind_presses = []
        self.blind_count = 0
        self.g.blind_matched = 0

    def presses_blind(self) -> bool:
        """Are presses recorded but not judged (board link down, or its divergence not yet resolved)?"""
        if self.g.board_down:
            return True
        if self.g.outage_divergence is None:
            return False
        irr = self.g.irr.get(self.g.outage_divergence)
        if irr is None or irr.status is Status.RESOLVED:
            self.g.outage_divergence = None
            return False
        return True

    def blind_press(self, outs: list[Output], press: _Press) -> None:
        """A press made while the board link was down: recorded with the clock it showed, not judged.

        The presser's own made move still waiting for its press (the last move of the record) is completed
        by it, as it would be with the board. Any later press waits for the board's return: the reconciling
        dump gives it to the recovered move it completed, in order (:meth:`Restoration.forward_jump`).
        """
        side = press.lever_before
        if side is None or press.lever_after is None or side == press.lever_after:
            return  # the lever ended where it was: no press
        self.g.last_press_at = press.first_at
        if not self.g.board_down:
            # the record still lacks what the outage hid (an open divergence), or the board came back while
            # the press was pending: there is no position to judge it against
            reason = f"POSITION_DIVERGENCE {self.g.outage_divergence} open" if self.presses_blind() \
                else "board link down"
            outs.append(GameEvent(at=press.first_at, type="PRESSES_NOT_JUDGED", code=None,
                                  details={"presses": 1, "matched": 0, "reason": reason}))
            return
        self.blind_count += 1
        ply = self.g.uncompleted.get(side)
        if ply is not None and ply == len(self.g.records) and side != self.g.board.turn \
                and self.g.playing and not any(p.side == side for p in self.g.blind_presses):
            self.g.blind_matched += 1
            self.e.made_moves.complete(outs, ply, press.first_at, Completion.PRESS)
            outs.append(StateChanged(at=press.first_at))
            return
        self.g.blind_presses.append(_BlindPress(side=side, at=press.first_at, clock=self.g.clock))

    def on_link(self, outs: list[Output], event: LinkChanged, at: float) -> None:
        name = event.link.value
        outs.append(LinkUpdate(at=at, link=name, up=event.up, detail=event.detail))
        kind = f"{name.upper()}_{'RECONNECTED' if event.up else 'DISCONNECTED'}"
        outs.append(GameEvent(at=at, type=kind, details={"detail": event.detail}))
        if event.link is Link.BOARD and event.up:
            self.g.resync = True  # the next board dump reconciles what was missed
        elif event.link is Link.BOARD:
            # presses are recorded, not judged, until the board reports again
            self.g.board_link.fire(LinkTrigger.LINK_DOWN)
        if event.link is Link.CLOCK and not event.up and not self.g.clock_down:
            self.clock_lost(outs, at)
        elif event.link is Link.CLOCK and event.up:
            self.g.clock_link.fire(LinkTrigger.LINK_UP)

    def clock_lost(self, outs: list[Output], at: float) -> None:
        """The clock link went down: play on as without a clock until its readings come back.

        Moves are completed by the player's next move (6.2.1.2) and no press-related code is raised for
        moves made, or left uncompleted, while it is down; the clock is published as unknown (no times, not
        running), so no move carries a frozen ``[%clk]``. The first reading after the outage takes the lever
        as it finds it (presses during the outage were not seen); if the lever moved meanwhile and shows the
        opponent's clock running, the last move still waiting for its press was pressed: it is completed then, with
        no clock times (:meth:`Downtime.clock_back`).
        """
        self.g.clock_link.fire(LinkTrigger.LINK_DOWN)
        if not self.g.clock_seen:
            return  # no clock yet (the engine keeps time if it can): nothing to forget
        self.g.clock_resync = True
        self.g.clockless.update(self.g.uncompleted.values())
        self.g.held_reading = None
        self.g.prev_reading = None
        self.g.shown = None
        self.g.paused = False
        self.g.clock = ClockState()
        outs.append(ClockUpdate(at=at, clock=self.g.clock))
        outs.append(StateChanged(at=at))
