"""Audit: one incident is one alert, from the engine's findings to what the arbiter's tablet shows.

Seeded games of the simulator (``drivers.sim``: random games, the three handling profiles, every injection
kind and every correction cycle it can play) go through the real engine and the contract publisher
(``boardd.daemon.replay.Replay``: exactly what the daemon publishes) into the web service's hub, whose views a
model of the tablet page (:class:`tests.consumers.alerts.Tablet`: arbiter.js ``announce`` and its cards) turns
into alerts. What the simulator does not do, the tests write from the Laws and the protocols: the arbiter on
the tablet (acknowledge after a few seconds, resolve later, sometimes while the board is already resolving
the incident), the web service restarted (a hub rebuilt from the retained messages only; the open page
reconnects and a new tablet joins), the daemon restarted (the current game rebuilt from the journal in a
fresh engine, a new session; docs/downtime.md), the board's USB link dropping and coming back (status,
``LinkChanged``, the board's dump), and sensor flicker (a square's reading reverting within ``T_flicker``).

Counted per incident (the engine's primary finding and the findings that joined it): exactly one card for an
incident with a finding that asks for action, none for one made only of info findings (notes), at most one
banner (exactly one for an open illegal move), nothing again for updates (acknowledged, resolved, ruling),
for retained replays, for reconnects; and nothing left once the arbiter resolved everything.
"""

from __future__ import annotations

import heapq
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import chess
import pytest

from boardd.core.contract import Publication, Publisher, iso_timestamp
from boardd.core.engine.downtime import RESTART_DETAIL
from boardd.core.events import (
    Acknowledge,
    BoardSnapshot,
    ClockReading,
    Content,
    Event,
    Link,
    LinkChanged,
    Resolve,
    SquareChanged,
)
from boardd.core.outputs import Irregularity, Severity
from boardd.daemon.replay import Replay, ReplayOptions
from drivers.sim import (
    Correction,
    CorrectionKind,
    Injection,
    InjectionKind,
    SimulatedGame,
    SimulationError,
    applicable,
    correction_applicable,
    random_game,
    simulate_game,
)
from tests.consumers.alerts import Tablet, Watch

PREFIX = "hall"
BOARD = "t1"
SEEDS = range(4)
KINDS: list[InjectionKind | CorrectionKind] = [*InjectionKind, *CorrectionKind]


# --- games ------------------------------------------------------------------------------------------------


def _plies(moves: Sequence[str], fits: Callable[[chess.Board, chess.Move, bool], bool]) -> list[int]:
    board, found = chess.Board(), []
    for n, uci in enumerate(moves):
        move = chess.Move.from_uci(uci)
        if fits(board, move, n + 1 < len(moves)):
            found.append(n + 1)
        board.push(move)
    return found


def game_with(kind: InjectionKind | CorrectionKind | None, seed: int, *, max_plies: int = 60) -> SimulatedGame | None:
    """A random game of ``seed`` with one incident of ``kind`` at a ply where it fits (None: none fits)."""
    rng = random.Random(f"{kind}-{seed}")
    game = random_game(seed, max_plies=max_plies)
    profile = rng.choice(["clean", "casual", "clumsy"])
    if kind is None:
        return simulate_game(game, seed=seed, profile=profile)
    moves = simulate_game(game, seed=seed).moves
    injections: tuple[Injection, ...] = ()
    corrections: tuple[Correction, ...] = ()
    if isinstance(kind, InjectionKind):
        plies = _plies(moves, lambda b, m, more: applicable(kind, b, m, has_next=more))
        if plies:
            injections = (Injection(kind, rng.choice(plies)),)
    else:
        plies = _plies(moves, lambda b, m, _: correction_applicable(kind, b, m))
        if plies:
            corrections = (Correction(kind, rng.choice(plies)),)
    if not plies:
        return None
    try:
        return simulate_game(game, seed=seed, profile=profile, injections=injections, corrections=corrections)
    except SimulationError:
        return None


def games(kind: InjectionKind | CorrectionKind | None, seeds: range = SEEDS) -> list[SimulatedGame]:
    found = [g for s in seeds if (g := game_with(kind, s)) is not None]
    if not found:  # castling kinds: look further for a game that castles
        found = [g for s in range(seeds.stop, seeds.stop + 40) if (g := game_with(kind, s)) is not None][:1]
    assert found, kind
    return found


def incidents(findings: Sequence[Irregularity]) -> tuple[set[str], set[str]]:
    """The engine's incidents: those with a finding that asks for action, and those of notes only."""
    asking = {f.incident or f.id for f in findings if f.severity is not Severity.INFO}
    notes = {f.incident or f.id for f in findings if f.severity is Severity.INFO} - asking
    return asking, notes


def physical(events: Sequence[Event], upto: int) -> tuple[Content, ...]:
    """The board's squares (its own frame) after ``events[:upto]``."""
    squares: list[Content] = [None] * 64
    for event in events[:upto]:
        if isinstance(event, BoardSnapshot):
            squares = list(event.squares)
        elif isinstance(event, SquareChanged):
            squares[event.square] = event.content
    return tuple(squares)


# --- the hall: a board, the web service, the tablets ------------------------------------------------------


@dataclass
class Hall:
    """One board's daemon (a Replay), the web service's hub and the tablets that watch it."""

    sim: SimulatedGame
    replay: Replay = field(init=False)
    live: Tablet = field(default_factory=Tablet)        # a page open all along on a web service never restarted
    page: Tablet = field(default_factory=Tablet)        # a page open all along, through the web service's restarts
    web: Watch = field(init=False)
    reference: Watch = field(init=False)
    retained: dict[str, bytes] = field(default_factory=dict)
    late_mismatches: list[tuple[float, list[str], list[str]]] = field(default_factory=list)
    web_restarts: int = 0
    journal: list[Event] = field(default_factory=list)  # every event fed (the daemon's journal)
    wire: random.Random | None = None  # the page's service gets the messages reordered and redelivered
    clock_down: bool = False           # the clock's link is down (until its next message)

    def __post_init__(self) -> None:
        self.replay = Replay(self.sim.header, ReplayOptions(board=BOARD, prefix=PREFIX))
        self.reference = Watch(PREFIX, [self.live])
        self.web = Watch(PREFIX, [self.page])

    def publish(self, publications: Sequence[Publication], at: float | None = None) -> None:
        """The publications reach the services at ``at`` (the hall's time; None: just after the last)."""
        wire: list[tuple[float, int, str, bytes]] = []
        last: dict[str, float] = {}
        for n, p in enumerate(publications):
            payload = p.payload_bytes()
            self.reference.take(p.topic, payload, at)
            if p.retain:
                self.retained[p.topic] = payload
            # the page's service: topics overtake each other (each topic keeps its order), QoS 1 redeliveries
            slot = n + (self.wire.uniform(0.5, 3.5) if self.wire is not None and self.wire.random() < 0.3 else 0.0)
            slot = last[p.topic] = max(slot, last.get(p.topic, -1.0))
            wire.append((slot, n, p.topic, payload))
            if self.wire is not None and p.qos == 1 and self.wire.random() < 0.1:
                wire.append((slot + self.wire.uniform(0.1, 4.0), n, p.topic, payload))
        for _, _, topic, payload in sorted(wire):
            self.web.take(topic, payload, at)

    def tick(self, at: float) -> None:
        """The services' clock loops run up to ``at``."""
        self.reference.tick(at)
        self.web.tick(at)

    def feed(self, event: Event) -> None:
        if isinstance(event, LinkChanged) and event.link is Link.CLOCK:
            self.clock_down = not event.up
        elif isinstance(event, ClockReading) and self.clock_down:
            # the DGT driver: the first clock message after the board (or the daemon) came back brings the
            # clock's link up (drivers/dgt/mapping.py)
            self.feed(LinkChanged(at=event.at, link=Link.CLOCK, up=True, detail="dgt3000"))
        self.journal.append(event)
        self.tick(event.at)
        self.publish(self.replay.feed(event), event.at)

    def restart_web(self, at: float) -> None:
        """The web service restarts: its hub knows the retained messages only; a tablet joins, the page reconnects."""
        self.web_restarts += 1
        web = Watch(PREFIX)
        web.now = self.web.now
        for topic, payload in self.retained.items():
            web.take(topic, payload, at)
        newcomer = Tablet()
        web.attach(newcomer)
        late, live = sorted(newcomer.needing.get(BOARD, set())), sorted(self.live.needing.get(BOARD, set()))
        if late != live:
            self.late_mismatches.append((at, late, live))
        web.attach(self.page)
        self.web = web

    def restart_daemon(self, at: float) -> None:
        """The daemon restarts: its offline status at the stop, its journal replayed in a fresh engine, a new
        session, the state published again, then the restart's two outages (boardd.daemon.service.mark_restart)."""
        old = self.replay.publisher
        # the clean stop (boardd.daemon.service: the retained offline status; a crash: its last will, the same)
        self.publish([old.status(state="offline", board_link={"driver": "dgt", "port": "/dev/ttyACM0", "serial": None,
                                                              "connected": False},
                                 clock_link={"model": "dgt3000", "connected": False}, at=at)], at)
        replay = Replay(self.sim.header, ReplayOptions(board=BOARD, prefix=PREFIX))
        for event in self.journal:
            replay.feed(event)  # replayed outputs are not published again
        replay.publisher = Publisher(board=BOARD, prefix=PREFIX, session=old.session + 1, seq=old.seq,
                                     ts=iso_timestamp)
        self.replay = replay
        self.publish([replay.publisher.status(
            state="online", board_link={"driver": "dgt", "port": "/dev/ttyACM0", "serial": None, "connected": True},
            clock_link={"model": "dgt3000", "connected": True}, at=at),
            *replay.publisher.snapshot(replay.engine.state, at=at)], at)
        for link in (Link.CLOCK, Link.BOARD):
            self.feed(LinkChanged(at=at, link=link, up=False, detail=RESTART_DETAIL))

    def board_back(self, squares: tuple[Content, ...], at: float) -> None:
        """The driver finds the board again: link up, then the full dump (drivers/base.py)."""
        self.feed(LinkChanged(at=at, link=Link.BOARD, up=True, detail="/dev/ttyACM0"))
        self.feed(BoardSnapshot(at=at, squares=squares))


def play(sim: SimulatedGame, *, seed: int, arbiter: bool = True, web_restarts: int = 3,
         trouble: Callable[[Hall, list[Event], int], int] | None = None, wire: bool = False) -> Hall:
    """Play ``sim`` into a hall; the arbiter acknowledges and resolves what the tablet shows him.

    ``trouble(hall, events, n)`` may act before event ``n`` and return the index of the next event to feed.
    """
    rng = random.Random(seed)
    hall = Hall(sim, wire=random.Random(seed + 1) if wire else None)
    events = list(sim.events)
    restarts = set(rng.sample(range(1, len(events)), min(web_restarts, len(events) - 1)))
    commands: list[tuple[float, int, Event]] = []
    handled: set[tuple[str, str]] = set()
    n = 0
    while n < len(events):
        event = events[n]
        while commands and commands[0][0] <= event.at:
            hall.feed(heapq.heappop(commands)[2])
        if n in restarts:
            hall.restart_web(event.at)
        if trouble is not None:
            nxt = trouble(hall, events, n)
            if nxt != n:
                n = nxt
                continue
        hall.feed(event)
        n += 1
        if not arbiter:
            continue
        # what the arbiter's tablet shows now: the last view the live page received (every change of the board's
        # incidents reaches it; asking the hub for its view after every event made a long game quadratic)
        view = hall.live.shown.get(BOARD)
        for incident in (view or {}).get("incidents", []):
            key = (incident["id"], incident["target"])
            if incident["needs_arbiter"] and key not in handled:
                # the arbiter sees the card, walks over, taps Acknowledge, rules later (the tablet's target)
                handled.add(key)
                ack = event.at + rng.uniform(1.0, 20.0)
                resolve = ack + rng.uniform(5.0, 90.0)
                heapq.heappush(commands, (ack, len(commands) * 2, Acknowledge(at=ack, irregularity_id=key[1])))
                # a suspected two-handed move: the tablet's Confirm two hands / Dismiss rule on its press finding
                two_hands = incident.get("two_hands")
                ruling = Resolve(at=resolve, irregularity_id=key[1], ruling="warning given") if two_hands is None \
                    else Resolve(at=resolve, irregularity_id=two_hands, ruling="two hands", accept=rng.random() < 0.5)
                heapq.heappush(commands, (resolve, len(commands) * 2 + 1, ruling))
    hall.publish(hall.replay.finish())
    while commands:
        hall.feed(heapq.heappop(commands)[2])
    hall.restart_web(events[-1].at + 1000.0)
    return hall


def alerts_per_incident(hall: Hall, findings: Sequence[Irregularity]) -> None:
    """The rule, as measured on the live page, on the page that went through restarts, and for late joiners."""
    asking, notes = incidents(findings)
    game = next(iter({key[1] for key in hall.live.cards} or {""}))
    cards = {key[2]: n for key, n in hall.live.cards.items()}
    assert cards == dict.fromkeys(asking, 1), (cards, asking)  # one card per incident, none for notes
    assert not set(cards) & notes
    illegal_primaries = {f.id for f in findings if f.incident is None and f.severity is Severity.ILLEGAL_MOVE}
    banners = {key[2]: n for key, n in hall.live.banners.items()}
    assert all(n == 1 for n in banners.values()), banners
    assert illegal_primaries <= set(banners) <= asking, (banners, illegal_primaries)
    # the page that lived through the web service's restarts: nothing again
    assert hall.page.cards == hall.live.cards and hall.page.banners == hall.live.banners, (game, hall.page.history)
    assert hall.late_mismatches == []


# --- the tests ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_one_alert_per_incident_of_every_kind(kind: InjectionKind | CorrectionKind) -> None:
    for sim in games(kind):
        hall = play(sim, seed=sim.seed)
        findings = hall.replay.engine.irregularities
        expected = {code.partition("/")[0] for _, code in sim.expected_codes}
        assert expected <= {f.code for f in findings}, (kind, sim.seed, expected)
        alerts_per_incident(hall, findings)
        # the arbiter resolved everything: nothing left on the tablet, nothing open in the retained state
        assert hall.live.needing[BOARD] == set() and hall.page.needing[BOARD] == set()
        assert hall.replay.engine.state.open_irregularities == ()


@pytest.mark.parametrize("kind", [InjectionKind.PRESS_PIECE_IN_HAND, InjectionKind.TWO_HANDS_CASTLING,
                                  InjectionKind.LATE_PRESS, CorrectionKind.ILLEGAL_CAPTURE,
                                  CorrectionKind.PAWN_NOT_REPLACED], ids=str)
def test_messages_reordered_and_redelivered_raise_nothing_again(kind: InjectionKind | CorrectionKind) -> None:
    """The page's web service gets each publication batch with the topics overtaking each other (each topic in
    order, as MQTT keeps it) and QoS 1 redeliveries: the same cards and banners as the page that got them in
    order."""
    for sim in games(kind):
        hall = play(sim, seed=sim.seed, wire=True)
        alerts_per_incident(hall, hall.replay.engine.irregularities)
        assert hall.page.needing[BOARD] == set()


@pytest.mark.parametrize("seed", range(6))
def test_handling_noise_alone_raises_no_alert(seed: int) -> None:
    """Adjustments, flicker, late presses, parked captures, pauses...: notes; only what the profile did on
    purpose (a clumsy player's changed mind: rules-spec R07) may ask for the arbiter."""
    sim = game_with(None, seed)
    assert sim is not None
    hall = play(sim, seed=seed, arbiter=False)
    findings = hall.replay.engine.irregularities
    deliberate = {code.partition("/")[0] for _, code in sim.expected_codes}
    asking = [f for f in findings if f.severity is not Severity.INFO]
    assert {f.code for f in asking} <= deliberate, [(f.id, f.code) for f in asking]
    alerts_per_incident(hall, findings)
    assert len(hall.live.cards) == len({f.incident or f.id for f in asking})


def _quiet(events: Sequence[Event], at: float, before: float, after: float) -> bool:
    """No board change, command or press (a lever change) within ``before`` s before ``at`` and ``after`` s from
    it. (The first clock reading after a restart takes the lever as it finds it, by design: a press that is
    that reading is not judged; docs/downtime.md.)"""
    lever = None
    for event in events:
        if isinstance(event, ClockReading):
            changed = lever is not None and (event.lever_high, event.running) != lever
            lever = (event.lever_high, event.running)
            if not changed:
                continue
        if at - before <= event.at <= at + after:
            return False
    return True


def flickers(rng: random.Random, log: list[tuple[float, str, str, str]], *, rate: float = 0.5
             ) -> Callable[[Hall, list[Event], int], int]:
    """A square's reading drops out or misreads for 30-200 ms (< T_flicker) on a quiet board, before about
    ``rate`` of the events; each one is noted in ``log``."""

    def flicker(hall: Hall, events: list[Event], n: int) -> int:
        if n < 3 or rng.random() > rate:
            return n
        squares = physical(events, n)
        square = rng.randrange(64)
        content = squares[square]
        glitch: Content
        if content is None:
            glitch = chess.Piece(rng.choice(chess.PIECE_TYPES[:5]), rng.choice(chess.COLORS))
        else:
            glitch = None if rng.random() < 0.6 else chess.Piece(
                rng.choice([t for t in chess.PIECE_TYPES[:5] if t != content.piece_type]), content.color)
        last = hall.journal[-1].at
        gap = events[n].at - last
        if gap < 0.3:
            return n
        start = last + rng.uniform(0.0, gap - 0.25)
        end = start + rng.uniform(0.03, 0.20)
        if not _quiet(events, start, 0.6, end - start + 0.6):
            return n
        hall.feed(SquareChanged(at=start, square=square, content=glitch))
        hall.feed(SquareChanged(at=end, square=square, content=content))
        log.append((start, chess.square_name(square), str(glitch), str(content)))
        hall.feed(events[n])
        return n + 1

    return flicker


@pytest.mark.parametrize("seed", range(4))
def test_sensor_flicker_raises_no_alert(seed: int) -> None:
    """A square's reading drops out or misreads for 30-200 ms (< T_flicker), many times, on a quiet board."""
    sim = game_with(None, seed)
    assert sim is not None
    plain = play(sim, seed=seed, arbiter=False, web_restarts=0)
    log: list[tuple[float, str, str, str]] = []
    hall = play(sim, seed=seed, arbiter=False, web_restarts=2, trouble=flickers(random.Random(seed), log))
    assert len(log) >= 20
    noted = Counter(f.code for f in hall.replay.engine.irregularities if f.severity is Severity.INFO)
    assert noted["SENSOR_FLICKER"] >= len(log) // 2
    asking = [(f.code, f.ply) for f in hall.replay.engine.irregularities if f.severity is not Severity.INFO]
    assert asking == [(f.code, f.ply) for f in plain.replay.engine.irregularities
                      if f.severity is not Severity.INFO], (asking, log)
    assert [m.uci for m in hall.replay.engine.state.moves] == sim.moves
    alerts_per_incident(hall, hall.replay.engine.irregularities)


def restarts_and_flaps(rng: random.Random, done: list[str]) -> Callable[[Hall, list[Event], int], int]:
    """On a quiet board (nobody touches it 1.5 s before and 2.5 s after): a daemon restart, or the board's USB
    link dropping for 0.3 s, in turn, at most six times a game."""

    def trouble(hall: Hall, events: list[Event], n: int) -> int:
        if n < 5 or not _quiet(events, events[n].at, 1.5, 2.5) or rng.random() > 0.3 or len(done) >= 6:
            return n
        at = max(hall.journal[-1].at, events[n].at - 1.0)  # after the last event fed (an arbiter's command)
        if len(done) % 2 == 0:
            hall.restart_daemon(at)
            done.append("restart")
        else:
            hall.feed(LinkChanged(at=at, link=Link.BOARD, up=False, detail="USB read failed: device gone"))
            hall.feed(LinkChanged(at=at, link=Link.CLOCK, up=False, detail="board link down"))  # its jack too
            done.append("flap")
        hall.board_back(physical(events, n), min(at + 0.3, events[n].at))
        return n

    return trouble


@pytest.mark.parametrize("kind", [None, InjectionKind.PRESS_PIECE_IN_HAND, InjectionKind.TOUCH_MOVE,
                                  CorrectionKind.ILLEGAL_GEOMETRY, CorrectionKind.PAWN_NOT_REPLACED], ids=str)
def test_a_daemon_restart_and_board_reconnects_raise_nothing_again(kind: InjectionKind | CorrectionKind | None) -> None:
    """The daemon restarted on a quiet board, and the board's USB link dropping for a moment while nobody
    touches it: the open incidents are not alerted again, and nothing new is raised."""
    for seed in SEEDS:
        sim = game_with(kind, seed)
        if sim is None:
            continue
        plain = play(sim, seed=seed, web_restarts=0)
        done: list[str] = []
        hall = play(sim, seed=seed, web_restarts=1, trouble=restarts_and_flaps(random.Random(seed), done))
        assert "restart" in done and "flap" in done
        findings = hall.replay.engine.irregularities
        assert [(f.id, f.code) for f in findings if f.severity is not Severity.INFO] == [
            (f.id, f.code) for f in plain.replay.engine.irregularities if f.severity is not Severity.INFO]
        assert [m.uci for m in hall.replay.engine.state.moves] == sim.moves
        alerts_per_incident(hall, findings)
        assert hall.live.cards == plain.live.cards and hall.live.banners == plain.live.banners
