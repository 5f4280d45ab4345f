"""The tablet's socket sends what changed (``delta``), not the board's whole view: the page's view built from the
deltas is the view a fresh snapshot gives, at every step, and a frame does not grow with the game's findings.

Seeded games of the simulator go through the real engine and contract publisher into the hub
(:mod:`tests.consumers.test_alert_audit`: the arbiter acknowledging and ruling, findings the board resolves,
web service restarts with a page reconnecting and a tablet joining late, messages reordered and redelivered,
daemon restarts, the arbiter's ``set-result`` closing what is left). After every message the hub sends, each
page's view (snapshot, then deltas applied by :func:`boardd.consumers.web.tablet.apply_delta`, the page's
``applyDelta``) must equal the hub's fresh view of the board, and the hub's incremental findings must equal
the fold of every finding from scratch (the computation the hub made on every message before).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

import tests.consumers.test_alert_audit as audit
from boardd.consumers.web.hub import Hub, Message, _key
from boardd.consumers.web.incidents import finding_status, fold, incident_of
from boardd.consumers.web.tablet import apply_delta
from boardd.core.events import SetResult
from drivers.sim import CorrectionKind, InjectionKind
from tests.consumers.alerts import Watch
from tests.consumers.feed import Feed, load_games, script

BOARD = audit.BOARD


def from_scratch(hub: Hub, board: str) -> dict[str, Any]:
    """``flags``, ``incidents``, ``log`` and ``rank`` as the hub computed them on every message before: every
    finding's status against the state, then one fold of them all."""
    record, extra = hub.hall.boards[board], hub.extra[board]
    state = record.state or {}
    edition = (state.get("game") or {}).get("edition")
    open_ids = [str(i) for i in state.get("open_irregularities") or []]
    flags: list[dict[str, Any]] = []
    for ident, body in extra.irregularities.items():
        status = finding_status(body)
        if _key(body) < _key(state) and status != "noted":
            if ident in open_ids and status == "resolved":
                status = "open"
            elif ident not in open_ids and status != "resolved":
                status = "resolved"
        flags.append({**body, "status": status, "incident": incident_of(body),
                      "title": hub.title(str(body.get("code", "")), body.get("edition") or edition)})
    flags += [{"id": i, "code": None, "title": "details not received (joined late)", "severity": None,
               "status": "open", "incident": None} for i in open_ids if i not in extra.irregularities]
    incidents, log = fold(flags)
    resolved = {f["id"] for f in flags if f["status"] == "resolved"}
    for incident in incidents:
        incident["dismissed"] = [m for m in [incident["id"], *incident["related"]]
                                 if m in extra.dismissed and m in resolved]
    rank = max((audit_rank(i) for i in incidents if i["status"] == "open"), default=0)
    return {"flags": flags, "incidents": incidents, "log": log, "rank": rank}


def audit_rank(incident: dict[str, Any]) -> int:
    return {"illegal-move": 3, "warning": 2, "info": 1}.get(str(incident["severity"]), 0)


def without(items: Iterable[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return [{k: v for k, v in item.items() if k != key} for item in items]


class Checked(Watch):
    """A hub and its pages, checked after every message the hub sends to the tablets."""

    checks = 0
    deltas = 0
    takebacks = 0  # deltas that took plies back from the page's moves

    def deliver(self, messages: Iterable[Message]) -> None:
        for message in messages:
            self.check(message)

    def check(self, message: Message) -> None:
        """Deliver ``message`` to the pages; a tablet's message: every page's view is the hub's fresh view, and
        the hub's findings are the fold of them all."""
        page = self.tablets[0].shown if self.tablets else {}
        before = {board: len(view["state"].get("moves") or []) for board, view in page.items()}
        super().deliver([message])
        body = json.loads(message.text)
        if message.audience != "arbiter" or body["t"] not in ("board", "delta"):
            return
        board = body["board"] if body["t"] == "delta" else body["view"]["board"]
        Checked.deltas += body["t"] == "delta"
        Checked.takebacks += "moves" in body and body["moves"][0] < before.get(board, 0)
        fresh = self.hub.arbiter_view(board, self.now)
        for tablet in self.tablets:
            assert tablet.shown[board] == fresh, (body, tablet.shown[board], fresh)
        old = from_scratch(self.hub, board)
        assert without(fresh["flags"], "pos") == old["flags"]
        assert without(fresh["incidents"], "last") == old["incidents"]
        assert fresh["log"] == old["log"] and fresh["rank"] == old["rank"]
        Checked.checks += 1


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> type[Checked]:
    monkeypatch.setattr(audit, "Watch", Checked)
    Checked.checks = Checked.deltas = Checked.takebacks = 0
    return Checked


KINDS = [InjectionKind.PRESS_PIECE_IN_HAND, InjectionKind.TWO_HANDS_CASTLING, InjectionKind.LATE_PRESS,
         InjectionKind.RELEASED_TAKEN_BACK, InjectionKind.TOUCH_MOVE, CorrectionKind.ILLEGAL_CAPTURE,
         CorrectionKind.ILLEGAL_GEOMETRY, CorrectionKind.PAWN_NOT_REPLACED]

TAKEN_BACK = {InjectionKind.RELEASED_TAKEN_BACK, CorrectionKind.ILLEGAL_CAPTURE, CorrectionKind.ILLEGAL_GEOMETRY}


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_deltas_build_the_snapshot_view_at_every_step(kind: InjectionKind | CorrectionKind,
                                                       checked: type[Checked]) -> None:
    """The arbiter rules, the board resolves, the web service restarts (the page reconnects, a tablet joins late
    from the retained state: findings known by their id only, details coming later), messages are reordered and
    redelivered: the page's view from deltas is the snapshot's after every message."""
    for sim in audit.games(kind, range(2)):
        audit.play(sim, seed=sim.seed, wire=True)
    assert checked.deltas > 50 and checked.checks > checked.deltas
    if kind in TAKEN_BACK:  # the record loses plies (a move taken back, an illegal move reinstated): the page too
        assert checked.takebacks > 0


@pytest.mark.parametrize("seed", range(3))
def test_set_result_and_daemon_restarts_through_deltas(seed: int, checked: type[Checked]) -> None:
    """Nobody rules: the arbiter's ``set-result`` closes every finding still open, in one state; a daemon restart
    and the board's link dropping (a new session) on the way."""
    kind = [InjectionKind.PRESS_PIECE_IN_HAND, CorrectionKind.ILLEGAL_CAPTURE, InjectionKind.LATE_PRESS][seed]
    sim = audit.games(kind, range(seed, seed + 1))[0]
    rng = random.Random(seed)
    hall = audit.play(sim, seed=seed, arbiter=False, trouble=audit.restarts_and_flaps(rng, []))
    view = hall.page.shown[BOARD]
    assert any(i["needs_arbiter"] for i in view["incidents"]), "nothing open to close: the test would prove nothing"
    before = checked.checks
    hall.feed(SetResult(at=hall.journal[-1].at + 1.0, result="1/2-1/2"))
    assert checked.checks > before
    assert not any(i["needs_arbiter"] for i in hall.page.shown[BOARD]["incidents"])


# --- frame size: flat in the number of findings ---------------------------------------------------------------


def frames_of_a_move(pgn_dir: Path, notes: int) -> list[int]:
    """Bytes of each frame the tablets get for one move (made, state, completed, state) on a board whose game
    has ``notes`` findings already (sensor-flicker notes: info, ``noted``, about 1 kB each)."""
    game = load_games(pgn_dir / "tatamast22.pgn", 1)[0]
    feed = Feed(script(game, board="t1", board_no=1, round_no=1, seed=1), prefix=audit.PREFIX)
    hub = Hub(prefix=audit.PREFIX)
    steps = feed.publications(upto=12)
    for topic, payload, _, _ in [p for step in steps[:11] for p in step]:
        hub.take(topic, payload, 1.0)
    for n in range(notes):
        topic, payload, _, _ = feed.irregularity(f"{n // 3 + 1}-{n % 3 + 1}", code="SENSOR_FLICKER", severity="info",
                                                 status="noted", ply=n // 60, incident=None)
        hub.take(topic, payload, 2.0)
    assert len(hub.arbiter_view("t1", 2.0)["log"]) == notes  # type: ignore[index]
    sizes = [len(m.text.encode()) for topic, payload, _, _ in steps[11] for m in hub.take(topic, payload, 3.0)
             if m.audience == "arbiter"]
    assert sizes, "the move sent the tablets nothing"
    return sizes


def test_a_move_frame_does_not_grow_with_the_findings_of_the_game(pgn_dir: Path) -> None:
    """600 notes in the game or 10: the tablets' frames of the next move are the same size, to a few digits of
    the counters (bytes, not time)."""
    few, many = frames_of_a_move(pgn_dir, 10), frames_of_a_move(pgn_dir, 600)
    assert len(few) == len(many)
    assert sum(many) - sum(few) <= 8 * len(many), (few, many)
    assert max(many) < 3000, many


def test_findings_known_by_id_only_are_dropped_and_a_new_game_is_sent_whole(pgn_dir: Path) -> None:
    """An older daemon's state lists open ids without their details (the late joiner's "details not received"):
    the page gets them, then their details, then their retraction when the state no longer lists them
    (``flags_drop``, ``incidents_drop``); a new game on the board is sent whole (``board``)."""
    game = script(load_games(pgn_dir / "tatamast22.pgn", 1)[0], board="t1", board_no=1, round_no=1, seed=1)
    feed = Feed(game, prefix=audit.PREFIX)
    hub = Hub(prefix=audit.PREFIX)
    page: dict[str, Any] = {}
    kinds: list[str] = []
    keys: set[str] = set()

    def take(publication: tuple[str, bytes, bool, int], now: float) -> None:
        for message in hub.take(publication[0], publication[1], now):
            body = json.loads(message.text)
            if message.audience != "arbiter":
                continue
            kinds.append(body["t"])
            keys.update(body)
            page["t1"] = body["view"] if body["t"] == "board" else apply_delta(page["t1"], body)
            assert page["t1"] == hub.arbiter_view("t1", now)

    for publication in [p for step in feed.publications(upto=6) for p in step]:
        take(publication, 1.0)
    clock = {"white": 5000.0, "black": 5000.0}
    take(feed.state(6, clock, "white", open_irregularities=("5-1", "6-1")), 2.0)
    assert [f["title"] for f in page["t1"]["flags"]] == ["details not received (joined late)"] * 2
    take(feed.irregularity("6-1", ply=6, side="black"), 3.0)  # its details: the same finding, in full
    assert [(f["id"], f["code"]) for f in page["t1"]["flags"]] == [("6-1", "ILLEGAL_MOVE/SELF_CHECK"), ("5-1", None)]
    take(feed.state(6, clock, "white", open_irregularities=("6-1",)), 4.0)  # 5-1 closed while we were away
    assert [f["id"] for f in page["t1"]["flags"]] == ["6-1"] and "flags_drop" in keys and "incidents_drop" in keys
    feed.g.round = "5.1"  # the next round's game on the board
    take(feed.state(0, {"white": 5400.0, "black": 5400.0}, None), 5.0)
    assert page["t1"]["flags"] == [] and kinds.count("board") == 2 and kinds[0] == "board"
