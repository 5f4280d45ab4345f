"""The hub's dismissals (``BoardExtra.dismissed``, the tablet's Undo) are bounded by the board's game and follow the
daemon's state: the real engine and publisher (``Replay``) on one side, the hub (pure) on the other, the messages
delivered in the orders MQTT allows (a ``cmd-result`` is another topic than the ``state``: it may arrive late,
or again, QoS 1).

* An answer to a dismissal that arrives after the board's next game started is the old game's: irregularity ids are
  unique within a game only (``{ply}-{n}``), and the same id names a finding of the new game.
* A dismissal upheld (``resolve`` with ``accept`` true) or taken back from another tablet or the command line leaves
  the daemon's ``dismissed``: the tablet offers no Undo for it any more (the daemon would refuse it).
* Over a day of games on a board the hub keeps the dismissals of the current game only.
* A web service started after the dismissal still knows it (from the retained state).
"""

from __future__ import annotations

import dataclasses
import json

from boardd.consumers.web.hub import Hub
from boardd.core.contract import Publication
from boardd.core.events import Event, GameInfo, NewGame
from boardd.core.outputs import Status
from boardd.daemon.commands import parse_command
from boardd.daemon.replay import Replay, ReplayOptions
from tests.consumers.test_web import PREFIX
from tests.consumers.test_web_dismiss import _RULE_AT, _events
from tests.core.test_illegal_count import _TC

BOARD = "t7"
#: one game's events span less than this (s): the next game is played this much later
_GAME_SPAN = 60.0


class Board:
    """The board's engine (as the daemon runs it) and what it published, not yet delivered to the hub."""

    def __init__(self) -> None:
        self.replay = Replay(None, ReplayOptions(board=BOARD, prefix=PREFIX, edition=2023, time_control=_TC))
        self.at = 0.0
        self.commands = 0

    def play(self, events: list[Event]) -> list[Publication]:
        out: list[Publication] = []
        for event in events:
            out += self.replay.feed(event)
            self.at = event.at
        return out

    def command(self, name: str, payload: dict[str, object]) -> tuple[list[Publication], Publication]:
        """The daemon's handler: the command applied (its publications) and its answer (published after them)."""
        self.at += 1.0
        parsed = parse_command(name, json.dumps(payload).encode(), at=self.at)
        published = self.replay.feed(parsed.event)
        return published, self.replay.publisher.command_result(command_id=parsed.id, ok=True, at=self.at,
                                                              command=name)

    def press(self) -> str:
        """The id of the game's press without a move (the finding the arbiter rules on)."""
        (press,) = [i for i in self.replay.engine.irregularities if i.code == "CLOCK_PRESS_NO_MOVE"]
        return press.id


def deliver(hub: Hub, publications: list[Publication]) -> None:
    for p in publications:
        hub.take(p.topic, p.payload_bytes(), 0.0)


def game_events(number: int) -> list[Event]:
    """Game ``number`` of the day (0: the board's first, started by the daemon's configuration): the same play every
    time (so the same finding ids), each game later than the last."""
    shift = number * _GAME_SPAN
    events = [dataclasses.replace(e, at=e.at + shift) for e in _events() if e.at < _RULE_AT]
    if number:
        events.insert(0, NewGame(at=events[0].at - 1.0, game=GameInfo(id=f"g{number}")))
    return events


def undo_offered(hub: Hub) -> set[str]:
    """The findings the tablet offers Undo for (every incident's ``dismissed``)."""
    view = hub.arbiter_view(BOARD, 0.0)
    assert view is not None
    return {m for incident in view["incidents"] for m in incident["dismissed"]}


def dismiss(hub: Hub, board: Board, ident: str, command_id: str) -> tuple[list[Publication], Publication]:
    payload = {"id": command_id, "irregularity": ident, "accept": False}
    hub.command_sent(BOARD, "resolve", payload)
    return board.command("resolve", payload)


def test_an_answer_that_arrives_after_the_next_game_is_not_the_new_games() -> None:
    hub, board = Hub(prefix=PREFIX), Board()
    deliver(hub, board.play(game_events(0)))
    press = board.press()
    published, answer = dismiss(hub, board, press, "c-dismiss")
    deliver(hub, published)  # the answer is late (another topic)
    # the next game: the same play, so its press has the same id; the arbiter upholds it (Resolve, accept true)
    deliver(hub, board.play(game_events(1)))
    assert board.press() == press
    published, confirmed = board.command("resolve", {"id": "c-uphold", "irregularity": press, "accept": True})
    deliver(hub, [*published, confirmed])
    assert board.replay.engine.state.dismissed_irregularity_details == ()
    deliver(hub, [answer, answer])  # the old game's answer, late and redelivered
    assert undo_offered(hub) == set()  # (before: Undo dismissal on the new game's confirmed press)
    assert hub.extra[BOARD].dismissed == {}


def test_a_dismissal_upheld_from_elsewhere_is_no_longer_offered_for_undo() -> None:
    hub, board = Hub(prefix=PREFIX), Board()
    deliver(hub, board.play(game_events(0)))
    press = board.press()
    published, answer = dismiss(hub, board, press, "c-dismiss")
    deliver(hub, [answer, *published])  # the answer first: the state that lists it is older
    assert undo_offered(hub) == {press}
    # another tablet (or `boardd` on the command line) upholds the press: this hub never saw the command
    published, upheld = board.command("resolve", {"id": "c-other", "irregularity": press, "accept": True})
    deliver(hub, [*published, upheld])
    assert board.replay.engine.dismissals.reopen_error(press) is not None  # the daemon would refuse the Undo
    assert undo_offered(hub) == set()  # (before: Undo dismissal still offered)
    assert press not in hub.extra[BOARD].dismissed


def test_a_dismissal_taken_back_elsewhere_and_dismissed_again_is_offered_again() -> None:
    hub, board = Hub(prefix=PREFIX), Board()
    deliver(hub, board.play(game_events(0)))
    press = board.press()
    published, answer = dismiss(hub, board, press, "c-dismiss")
    deliver(hub, [*published, answer])
    published, reopened = board.command("reopen", {"id": "c-other", "irregularity": press})
    deliver(hub, [*published, reopened])
    assert {i.id: i for i in board.replay.engine.irregularities}[press].status is not Status.RESOLVED
    assert press not in hub.extra[BOARD].dismissed and undo_offered(hub) == set()
    published, answer = dismiss(hub, board, press, "c-again")
    deliver(hub, [*published, answer])
    assert undo_offered(hub) == {press}


def test_a_day_of_games_keeps_the_current_games_dismissals_only() -> None:
    hub, board = Hub(prefix=PREFIX), Board()
    late: list[Publication] = []
    sizes = []
    for number in range(6):
        deliver(hub, board.play(game_events(number)))
        deliver(hub, late)  # the last game's answer, after this game's first states
        late = []
        press = board.press()
        if number % 2 == 0:  # the press dismissed (its answer late)
            published, answer = dismiss(hub, board, press, f"c{number}")
            deliver(hub, published)
            late.append(answer)
        else:  # the press upheld
            published, answer = board.command("resolve", {"id": f"c{number}", "irregularity": press, "accept": True})
            deliver(hub, [*published, answer])
        sizes.append((len(hub.extra[BOARD].dismissed), sorted(undo_offered(hub))))
    assert sizes == [(1, [press]), (0, []), (1, [press]), (0, []), (1, [press]), (0, [])]


def test_a_web_service_started_after_the_dismissal_knows_it_and_nothing_older() -> None:
    board, hub = Board(), Hub(prefix=PREFIX)
    old: list[Publication] = []
    old += board.play(game_events(0))
    published, answer = dismiss(hub, board, board.press(), "c0")
    old += [*published, answer]
    new = board.play(game_events(1))
    published, answer = dismiss(hub, board, board.press(), "c1")
    new += [*published, answer]
    fresh = Hub(prefix=PREFIX)  # the retained state only (the latest), then a redelivered old answer
    (state,) = [p for p in new if p.topic.endswith("/state")][-1:]
    deliver(fresh, [state, answer])
    assert undo_offered(fresh) == {board.press()}
    assert list(fresh.extra[BOARD].dismissed) == [board.press()]
