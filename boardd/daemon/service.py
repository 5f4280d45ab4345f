"""``boardd run``: driver -> journal -> engine -> contract -> outbox -> MQTT, in one TaskGroup.

Theory of operation
-------------------
One process serves one or several boards (``[[board]]`` sections; ``--board ID``
selects one, for ``boardd@.service`` instances). Each board gets a
:class:`BoardRuntime`: its own journal, engine, publisher, driver and MQTT
connection (one connection per board, so each has its own last will). All
I/O runs in **one** :class:`asyncio.TaskGroup` owned by :func:`serve`, with
named tasks whose references are kept:

``board-<id>``   reads the driver's events and feeds them through the pipeline;
``timer-<id>``   sleeps until ``engine.next_deadline()`` (or until a new event
                 moves the deadline) and calls ``engine.advance(now)``;
``mqtt-<id>``    the :class:`boardd.daemon.mqtt.MqttLink` (connect, drain outbox, commands);
``prune-<id>``   journal retention, at start and every hour;
``watchdog``     systemd's watchdog, fed only while every component progresses.

Board progress for the watchdog: every driver event, and every timer tick while the
driver's ``last_activity`` (its ``time_source`` time of the last bytes from the device or
the last reconnect attempt) is younger than the watchdog's stall limit (its interval: the
drivers' longest legitimate silence, their own link watchdog plus the longest reconnect delay,
is below 30 s).
A driver whose loop hangs with the port open (no bytes, no reconnect attempt) therefore
stops the pings although its reader task is alive; the log and ``STATUS=`` name the
board. A driver without ``last_activity`` counts as active while its reader task runs.

The pipeline step (:meth:`BoardRuntime.process`) is serialised by a lock:
``engine.feed(event)`` (pure, fast), ``publisher.render(...)`` of everything
but the ``state``/``pgn`` snapshot, then **one journal transaction** holding the
event and those publications (a move is on disk before it is handed to MQTT),
then the rows go to the MQTT link. The snapshot (the PGN grows with the game:
about 1.5 ms at move 45) is rendered only once the move was acknowledged by the
broker (or after a few ms, or at once when offline) and committed in a second
transaction: the move never waits for it. A crash between the two loses at most
that snapshot, which the daemon republishes from the rebuilt game at every
(re)connect anyway. Timer firings are journaled too (as
:class:`boardd.daemon.journal.Tick` rows), so that replaying the journal repeats the
exact sequence of ``feed``/``advance`` calls and rebuilds the exact engine
state: on start the current game is replayed through a fresh
:class:`~boardd.core.engine.Engine` (same game id, same moves), the session is
incremented, and unacknowledged outbox rows are re-sent before anything new.
Replayed outputs are not published again, except those no run ever committed
(a search's outputs killed before their commit: :meth:`BoardRuntime._publish_owed`,
found by the count of committed outputs each commit stores); the current
``state``/``pgn`` is appended to the outbox at every (re)connect.

Time: events are stamped on the daemon's time line (:class:`TimeLine`): Unix
seconds at start, advanced by the monotonic clock, never going backwards across
restarts (the journal's last event time is a floor).

Shutdown on SIGTERM/SIGINT: STOPPING=1, the driver and timers stop, each MQTT
link drains briefly and publishes the retained ``offline`` status, journals are
checkpointed and closed, exit status 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import functools
import importlib
import itertools
import json
import logging
import signal
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from boardd import __version__
from boardd.core import events as ev
from boardd.core.contract import Publication, Publisher
from boardd.core.engine import Engine
from boardd.core.engine.downtime import RESTART_DETAIL
from boardd.core.errors import BoarddError, ConfigError, DriverError
from boardd.core.outputs import GameEvent, MoveCompleted, MoveMade, Output, StateChanged
from boardd.daemon.commands import CommandError, ParsedCommand, default_new_game, parse_command
from boardd.daemon.config import BoardConfig, Config, load_config
from boardd.daemon.journal import AsyncJournal, Journal, Tick
from boardd.daemon.mqtt import MqttLink
from boardd.daemon.scheduling import take_realtime

__all__ = ["BoardRuntime", "JournalFormatter", "TimeLine", "apply_logging", "configure_parser", "run", "serve"]

_LOGGER = logging.getLogger(__name__)

PRUNE_EVERY_S = 3600.0
#: A driver event stamped further than this from the daemon's time line is re-stamped on receipt.
MAX_STAMP_SKEW_S = 600.0
#: Stall limit of a driver's ``last_activity`` without a systemd watchdog (then only logged).
DRIVER_STALL_S = 30.0
#: The timer task's longest sleep (it also checks the driver's activity).
TIMER_IDLE_S = 5.0
#: How long the state/pgn snapshot of a step waits for the broker to acknowledge the step's move.
SNAPSHOT_AFTER_ACK_S = 0.02
#: How long a command's result waits for the physical clock's answer (the DGT driver gives up after 3 x 2 s).
CLOCK_ANSWER_S = 8.0
#: The standard start position's placement (what ``Engine.physical_fen`` shows when the pieces are set up).
STANDARD_PLACEMENT = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"


class TimeLine:
    """The daemon's event time: Unix seconds at start, then monotonic; never behind *floor*."""

    def __init__(self, *, floor: float | None = None, monotonic: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        start = wall()
        if floor is not None and floor >= start:
            start = floor + 0.001
        self._mono = monotonic
        self._offset = start - monotonic()

    def now(self) -> float:
        """Current event time."""
        return self._mono() + self._offset

    def mono_of(self, at: float) -> float:
        """The monotonic-clock value of event time *at* (for sleeping until a deadline)."""
        return at - self._offset


def _utc_id(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y%m%dT%H%M%SZ")


def _first_period_s(time_control: str) -> int | None:
    try:
        from boardd.core.clock import TimeControl  # noqa: PLC0415

        periods = TimeControl.parse(time_control).periods
    except (ImportError, ValueError, BoarddError):
        return None
    return periods[0].seconds if periods else None


class BoardRuntime:
    """Everything of one board: journal, engine, publisher, driver, MQTT link.

    Args:
        board: the board's configuration.
        config: the whole configuration (MQTT, command tokens).
        driver_factory: overrides ``drivers.base.open_driver`` (tests); called with
            ``(kind, options, time_source=...)``.
        progress: called with a component name when that component made progress.
        notify_status: sets the systemd ``STATUS=`` line.
        driver_stall_after: the driver counts as hung when its ``last_activity`` is older than
            this (seconds); default :data:`DRIVER_STALL_S`.
    """

    def __init__(self, board: BoardConfig, config: Config, *, driver_factory: Callable[..., Any] | None = None,
                 progress: Callable[[str], None] = lambda _name: None,
                 notify_status: Callable[[str], object] = lambda _text: None,
                 driver_stall_after: float | None = None) -> None:
        self.board = board
        self.config = config
        self.driver_factory = driver_factory
        self._progress = progress
        self._notify_status = notify_status
        self.journal: Journal | None = None
        self.ajournal: AsyncJournal | None = None
        self.engine = Engine(board.rules)
        self.publisher: Publisher | None = None
        self.timeline = TimeLine()
        self.link: MqttLink | None = None
        self.driver: Any = None
        self.white_at_a1 = True
        self.game_id = ""
        self._lock = asyncio.Lock()
        self._deadline_changed = asyncio.Event()
        self._game_counter = 0
        self.reader_task: asyncio.Task[None] | None = None
        self.stats = {"events": 0, "commands": 0, "rejected_commands": 0, "journal_errors": 0, "ticks": 0,
                      "search_steps": 0,
                      "render_errors": 0, "restamped": 0}
        self._skew_warned = False
        self.driver_stall_after = driver_stall_after if driver_stall_after is not None else DRIVER_STALL_S
        self._driver_hung = False
        self._activity_clock_warned = False
        #: A permanent driver failure (the daemon then stops cleanly and exits 1).
        self.fatal: BaseException | None = None
        self.on_fatal: Callable[[], None] = lambda: None
        # The next game (auto_new_game): has the current game ended (None: not looked yet), and did the
        # board show the start position at the last look (a new set-up is a change to it)?
        self._ended: bool | None = None
        self._at_start = False
        self._start_placement = (board.game.start_fen or STANDARD_PLACEMENT).split(" ")[0]
        self._clock_model: str | None = None  # the driver's clock model last handed to the publisher
        #: The current game and how many of its engine outputs (after its GAME_START) were produced: committed
        #: with every batch of outputs (the game row's ``outputs``), compared with the replay at the next start.
        self._outputs: tuple[str, int] = ("", 0)

    # -- start-up ---------------------------------------------------------------

    def open(self) -> None:
        """Open the journal, start a session and rebuild the current game (blocking: call in a thread)."""
        cfg = self.board.journal
        journal = Journal.open(cfg.path, synchronous=cfg.synchronous)
        if journal.recovered_from is not None:
            _LOGGER.error("board %s: journal was corrupt, kept as %s; started a new one", self.board.id,
                          journal.recovered_from)
        session = journal.start_session()
        journal.prepare_wal()  # the WAL's growth is paid here, not by the first game's commits
        self.journal = journal
        replayed_outputs: list[tuple[int, float, Output]] = []
        replayed = self._rebuild(journal, replayed_outputs)
        last_at = journal.last_event_at()
        self.timeline = TimeLine(floor=last_at)
        self.publisher = Publisher(board=self.board.id, prefix=self.config.mqtt.prefix, session=session,
                                   seq=journal.seq)
        self._publish_owed(journal, replayed_outputs)
        _LOGGER.info("board %s: session %d, journal %s, replayed %d events of game %s (%d moves), %d unacked",
                     self.board.id, session, cfg.path, replayed, self.game_id or "-", self.engine.state.ply,
                     journal.unacked_count())

    def _rebuild(self, journal: Journal, outputs: list[tuple[int, float, Output]] | None = None) -> int:
        """Replay the current game's events; the replay's outputs (with the journal id and time of the call that
        made them) are appended to *outputs*."""
        game = journal.current_game()
        if game is None:
            return 0
        self.game_id = game.id
        bad: list[int] = []
        count = 0
        for event_id, item in journal.events(game.first_event, on_error=lambda i, _e: bad.append(i)):
            count += 1
            if isinstance(item, Tick):
                made = self.engine.advance(item.at)
            else:
                if isinstance(item, ev.SetOrientation):
                    self.white_at_a1 = item.white_at_a1
                elif isinstance(item, ev.NewGame):
                    self.white_at_a1 = True
                    self.game_id = item.game.id or self.game_id
                made = self.engine.feed(item)
            if outputs is not None:
                outputs.extend((event_id, item.at, o) for o in made)
        if bad:
            _LOGGER.error("board %s: %d undecodable journal rows skipped during replay (ids %s)", self.board.id,
                          len(bad), bad[:10])
        return count

    def _publish_owed(self, journal: Journal, replayed: Sequence[tuple[int, float, Output]]) -> None:
        """Journal the publications of the replay's outputs that no run committed: the outputs it owes.

        The outputs of the stepwise search (the recovered moves, ``MOVES_RECOVERED``, then what the calls
        that waited for it made: clock updates, findings, moves) are journaled apart from the events that
        produced them (:meth:`work`): killed between the two, the replay rebuilds them, but nothing of them was
        ever published. Every commit of engine outputs stores how many outputs of the game (after its
        ``GAME_START``) were committed so far (the game row's ``outputs``, in the same transaction); the live
        run and the replay produce the same outputs in the same order (``Engine.stepwise``), so the committed
        ones are the replay's first ones and the rest is owed: rendered here as the live run rendered them
        (per call, at its event time, the snapshot left to the connect; QoS 0 clock updates kept in the
        outbox too, so that they go out in order), journaled in one transaction with the new count (a crash
        before it owes them again, after it nothing: never twice), before the start-up status.
        A journal of schema 1 (count unknown) falls back to the moves the outbox lacks for the game.
        """
        game = journal.current_game()
        if game is None:
            return
        first = 0
        for i in range(len(replayed) - 1, -1, -1):
            output = replayed[i][2]
            if type(output) is GameEvent and output.type == "GAME_START":
                first = i + 1
                break
        outs = replayed[first:]
        self._outputs = (game.id, len(outs))
        if game.outputs is None:
            self._publish_unpublished_moves(journal, game.id, outs)
            return
        if game.outputs > len(outs):
            _LOGGER.warning("board %s: game %s: %d outputs committed, the replay made %d; none owed",
                            self.board.id, game.id, game.outputs, len(outs))
            return
        owed = outs[game.outputs:]
        if not owed:
            return
        pubs: list[Publication] = []
        for _, group in itertools.groupby(owed, key=lambda item: item[0]):
            batch = list(group)
            pubs.extend(self._render([o for _, _, o in batch], batch[0][1])[0])
        journal.record(None, pubs, seq=self._pub().seq, outputs=self._outputs, volatile=True)
        if any(type(o) is GameEvent and o.type == "GAME_END" for _, _, o in owed):
            journal.end_game(game.id, result=self.engine.state.result, pgn=self.engine.pgn())
        _LOGGER.warning("board %s: %d outputs of game %s were never committed (the daemon stopped between a "
                        "search and its commit); %d publications journaled now: %s", self.board.id, len(owed),
                        game.id, len(pubs), ", ".join(p.topic.rsplit("/", 1)[-1] for p in pubs))

    def _publish_unpublished_moves(self, journal: Journal, game: str,
                                   replayed: Sequence[tuple[int, float, Output]]) -> None:
        """A journal of schema 1: the ``move`` publications of the rebuilt record that the game's outbox lacks.

        Each move of the record (ply and uci) gets, in ply order, the publications of its phases (``made``,
        ``completed``) the outbox lacks for this game, rendered from the replay's outputs; the count of
        outputs is stored from here on.
        """
        record = {(m.ply, m.uci) for m in self.engine.state.moves}
        published: set[tuple[object, object, object]] = set()
        for payload in journal.outbox_payloads(self._pub().topic("move"), game=game):
            try:
                body = json.loads(payload)
                published.add((body.get("ply"), body.get("uci"), body.get("phase")))
            except (ValueError, AttributeError):
                continue
        missing: dict[tuple[int, str, str], tuple[float, MoveMade | MoveCompleted]] = {}
        for _, at, output in replayed:  # the last one of each (a move retracted and made again: as it stands)
            if not isinstance(output, MoveMade | MoveCompleted):
                continue
            move = output.move
            phase = "made" if isinstance(output, MoveMade) else "completed"
            key = (move.ply, move.uci, phase)
            if (move.ply, move.uci) in record and key not in published:
                missing[key] = (at, output)
        pubs: list[Publication] = []
        for key in sorted(missing, key=lambda k: (k[0], k[2] != "made")):
            at, output = missing[key]
            pubs.extend(self._pub().render([output], None, at=at))
        journal.record(None, pubs, seq=self._pub().seq, outputs=self._outputs)
        if pubs:
            _LOGGER.warning("board %s: %d move publications of game %s were not journaled (the daemon stopped "
                            "between a search and its commit); journaled now: %s", self.board.id, len(pubs),
                            game, ", ".join(f"{k[0]} {k[1]} {k[2]}" for k in sorted(missing)))

    # -- the pipeline ---------------------------------------------------------------

    def _pub(self) -> Publisher:
        assert self.publisher is not None
        return self.publisher

    def _aj(self) -> AsyncJournal:
        assert self.ajournal is not None
        return self.ajournal

    def _render(self, outputs: Sequence[Output], at: float) -> tuple[list[Publication], bool]:
        """The contract's publications but the snapshot, and whether the state changed (snapshot due).

        A failure there must not keep the event out of the journal.
        """
        changed = any(isinstance(o, StateChanged) for o in outputs)
        rest = [o for o in outputs if not isinstance(o, StateChanged)] if changed else outputs
        try:
            # the state is read for a StateChanged only (the snapshot, rendered apart): none is built here
            return self._pub().render(rest, None, at=at), changed
        except Exception:
            self.stats["render_errors"] += 1
            _LOGGER.exception("board %s: could not render %d outputs; the event is journaled anyway",
                              self.board.id, len(outputs))
            return [], changed

    def _produced(self, outputs: Sequence[Output]) -> tuple[str, int] | None:
        """The game and its count of engine outputs with *outputs* (None when there are none): see :meth:`open`."""
        if not outputs:
            return None
        game, count = self._outputs
        for i in range(len(outputs) - 1, -1, -1):
            output = outputs[i]
            if type(output) is GameEvent and output.type == "GAME_START":
                game, count = str(output.details.get("game_id") or self.game_id), len(outputs) - i - 1
                break
        else:
            count += len(outputs)
        self._outputs = (game, count)
        return self._outputs

    async def _commit(self, item: ev.Event | Tick | None, publications: Sequence[Publication], *,
                      closing: tuple[str, str, str] | None = None, snapshot_at: float | None = None,
                      produced: Sequence[Output] = ()) -> int | None:
        """Journal *item* and *publications* in one transaction and hand them to the MQTT link.

        *produced*: the engine outputs *publications* were rendered from (their count is committed with them).
        With *snapshot_at*, the ``state``/``pgn`` snapshot follows in a second transaction, once the
        link has had the chance to publish the first one's rows (see the module docstring).
        """
        outputs = self._produced(produced)
        try:
            event_id, rows = await self._aj().record_rows(item, publications, seq=self._pub().seq, closing=closing,
                                                          outputs=outputs)
        except Exception:
            # A full or failing disk must not lose the move: publish from memory, shout.
            self.stats["journal_errors"] += 1
            _LOGGER.exception("board %s: JOURNAL WRITE FAILED; publishing from memory only", self.board.id)
            if self.link is not None:
                for pub in publications:
                    self.link.publish_volatile(pub)
            event_id, rows = None, []
            if snapshot_at is None:
                return None
        else:
            if self.link is not None:
                for pub in publications:
                    if pub.qos == 0:
                        self.link.publish_volatile(pub)
                self.link.offer(rows)
                self.link.wake()
        if snapshot_at is not None:
            if self.link is not None and rows:
                await self.link.wait_acked(rows[-1].id, SNAPSHOT_AFTER_ACK_S)
            await self._commit(None, self._snapshot(snapshot_at))
        return event_id

    def _split(self, pubs: list[Publication], changed: bool, at: float) -> float | None:
        """*at* when the snapshot goes in a second transaction; else it is appended to *pubs* (or not due)."""
        if not changed:
            return None
        if any(p.qos > 0 for p in pubs):
            return at
        pubs.extend(self._snapshot(at))  # nothing to let go first: one transaction, one fsync
        return None

    def _snapshot(self, at: float) -> list[Publication]:
        try:
            return self._pub().snapshot(self.engine.state, at=at)
        except Exception:
            self.stats["render_errors"] += 1
            _LOGGER.exception("board %s: could not render the state snapshot", self.board.id)
            return []

    async def process(self, event: ev.Event, *, extra: Sequence[Publication] = ()) -> list[Output]:
        """Feed one event through engine, contract, journal and outbox."""
        async with self._lock:
            return await self._process_locked(event, extra=extra)

    async def _process_locked(self, event: ev.Event, *, extra: Sequence[Publication] = ()) -> list[Output]:
        previous = (self.game_id, self.engine.state.result, self.engine.pgn()) if isinstance(event, ev.NewGame) \
            else None
        outputs = self.engine.feed(event)
        if any(type(o) is GameEvent for o in outputs):  # game start/end, arbiter action...: has the game ended?
            self._note_game_end()
        pubs, changed = self._render(outputs, event.at)
        pubs.extend(extra)
        event_id = await self._commit(event, pubs, closing=previous, snapshot_at=self._split(pubs, changed, event.at),
                                      produced=outputs)
        self.stats["events"] += 1
        self._deadline_changed.set()
        await self._after(event, event_id, outputs)
        return outputs

    async def _after(self, event: ev.Event, event_id: int | None, outputs: Sequence[Output]) -> None:
        journal = self.journal
        assert journal is not None
        if isinstance(event, ev.SetOrientation):
            self.white_at_a1 = event.white_at_a1
        if isinstance(event, ev.NewGame) and event_id is not None:
            # the game row was written (and the previous one closed) in the event's transaction
            self.white_at_a1 = True
            self.game_id = event.game.id
        elif isinstance(event, ev.SetPlayers) and self.game_id:
            info = dataclasses.replace(self._game_info(), white=event.white, black=event.black)
            await self._aj().call(journal.update_game_info, info)
        for output in outputs:
            if isinstance(output, GameEvent) and output.type == "GAME_END" and self.game_id:
                await self._aj().call(journal.end_game, self.game_id, result=self.engine.state.result,
                                      pgn=self.engine.pgn())

    def _game_info(self) -> ev.GameInfo:
        s = self.engine.state
        return ev.GameInfo(id=s.game_id, white=s.white, black=s.black, event=s.event, site=s.site, date=s.date,
                           round=s.round, board_no=s.board_no, time_control=s.time_control, edition=s.edition,
                           start_fen=None if s.start_fen == ev.GameInfo().start_fen else s.start_fen,
                           chess960=s.chess960)

    def new_game_info(self, base: ev.GameInfo, at: float) -> ev.GameInfo:
        """*base* with a fresh unique game id and today's date when none was given."""
        self._game_counter += 1
        game_id = base.id or f"{self.board.id}-{_utc_id(at)}-{self._pub().session}-{self._game_counter}"
        date = base.date if base.date != "????.??.??" else datetime.fromtimestamp(at, UTC).strftime("%Y.%m.%d")
        return dataclasses.replace(base, id=game_id, date=date)

    async def announce(self) -> None:
        """Queue the start-up status (it also tells the publisher the driver and port for later link updates)."""
        async with self._lock:
            await self._commit(None, [self.online_status()])

    async def mark_restart(self, at: float) -> None:
        """Started again on a game in progress: the board and the clock were out of sight since the journal's end.

        Two journaled outages (clock, then board; detail ``daemon restarted``): the first clock reading
        takes the lever as it finds it, presses are not judged, and the board's first dump is reconciled
        by the recovery of what was played meanwhile (``boardd.core.engine.downtime``, issue 11).
        """
        if not self.game_id or self.engine.state.result != "*":
            return
        for link in (ev.Link.CLOCK, ev.Link.BOARD):
            await self.process(ev.LinkChanged(at=at, link=link, up=False, detail=RESTART_DETAIL))

    async def ensure_game(self, at: float | None = None) -> None:
        """Start the configured default game when the journal has none.

        Args:
            at: the game's start time; the serve loop passes the time taken *before* the driver was
                opened, because the driver stamps its first events (link up, board dump) on receipt and
                those must not look older than the game they belong to ("time went backwards").
        """
        if self.game_id:
            return
        at = self.timeline.now() if at is None else at
        await self.process(ev.NewGame(at=at, game=self.new_game_info(self.board.game, at)))

    async def advance(self) -> None:
        """Fire the engine's due timers (journaled as a Tick)."""
        async with self._lock:
            if self.engine.busy:
                return  # the search in progress first (work): the timers are checked again after it
            now = self.timeline.now()
            deadline = self.engine.next_deadline()
            if deadline is None or deadline > now:
                return
            outputs = self.engine.advance(now)
            self.stats["ticks"] += 1
            if any(type(o) is GameEvent for o in outputs):
                self._note_game_end()
            pubs, changed = self._render(outputs, now)
            await self._commit(Tick(at=now), pubs, snapshot_at=self._split(pubs, changed, now), produced=outputs)
            await self._after_tick(outputs)

    async def work(self) -> None:
        """The engine's recovery search in progress (stepwise), one bounded step at a time.

        Between two steps the loop runs: the other tasks publish, read commands and take the board's events
        (queued by the engine, in order, and processed when the search ends; they are journaled as they come,
        so the journal's replay, which searches at once, rebuilds the same game). What a step produces (the
        recovered moves, then what the waiting events made) is journaled and handed to the link as it comes.
        """
        while self.engine.busy:
            async with self._lock:
                outputs = self.engine.work()
                if outputs:
                    now = self.timeline.now()
                    if any(type(o) is GameEvent for o in outputs):
                        self._note_game_end()
                    pubs, changed = self._render(outputs, now)
                    await self._commit(None, pubs, snapshot_at=self._split(pubs, changed, now), produced=outputs)
                    await self._after_tick(outputs)
            self.stats["search_steps"] += 1
            await asyncio.sleep(0)

    async def _after_tick(self, outputs: Sequence[Output]) -> None:
        journal = self.journal
        assert journal is not None
        for output in outputs:
            if isinstance(output, GameEvent) and output.type == "GAME_END" and self.game_id:
                await self._aj().call(journal.end_game, self.game_id, result=self.engine.state.result,
                                      pgn=self.engine.pgn())

    # -- commands ---------------------------------------------------------------------

    async def on_command(self, name: str, payload: bytes) -> None:
        """Validate, apply and answer one command from ``{root}/cmd/{name}``."""
        async with self._lock:
            at = self.timeline.now()
            try:
                parsed = parse_command(name, payload, at=at, auth=self.config.commands, defaults=self.board.game,
                                       white_at_a1=self.white_at_a1)
                self._check_against_state(parsed)
            except CommandError as exc:
                self.stats["rejected_commands"] += 1
                _LOGGER.warning("board %s: command %s (%s) refused: %s", self.board.id, name,
                                exc.command_id or "no id", exc)
                result = self._pub().command_result(command_id=exc.command_id, ok=False, error=str(exc), at=at,
                                                    command=name)
                await self._commit(None, [result])
                return
            event = parsed.event
            if isinstance(event, ev.NewGame):
                event = dataclasses.replace(event, game=self.new_game_info(event.game, at))
            self.stats["commands"] += 1
            _LOGGER.info("board %s: command %s (%s) from %s", self.board.id, name, parsed.id, parsed.role or "-")
            extra: dict[str, Any] = {"command": name}
            if isinstance(event, ev.NewGame):
                extra["game_id"] = event.game.id
            clock = self._clock_command(event)
            if clock is None:
                # The answer shares the event's journal transaction (Engine.feed never raises on a validated command).
                result = self._pub().command_result(command_id=parsed.id, ok=True, at=at, **extra)
                await self._process_locked(event, extra=[result])
                return
            await self._process_locked(event)
        # The physical clock: the engine has the event first; the answer reports the clock's own answer.
        extra.update(await self._set_physical_clock(clock))
        async with self._lock:
            await self._commit(None, [self._pub().command_result(command_id=parsed.id, ok=True,
                                                                 at=self.timeline.now(), **extra)])

    # -- the next game ---------------------------------------------------------------------

    def _shows_start(self) -> bool:
        """Does the physical board show the start position (official frame)?"""
        return self.engine.physical_fen == self._start_placement

    def _note_game_end(self) -> None:
        """After a game event: whether the game has ended; where the pieces stood when it did."""
        ended = self.engine.state.result != "*"
        if ended and not self._ended:
            self._at_start = self._shows_start()  # a forfeit on an untouched board is no new set-up
        self._ended = ended

    async def watch_next_game(self, at: float) -> None:
        """After a board event of an ended game: the start position set up again starts the next game.

        Only a change *to* the start position counts (pieces put back after the game), so a result
        set on an untouched board starts nothing. With ``auto_new_game`` the next game starts as a
        ``new-game`` command without fields would (players ``?``, the configured defaults, round and
        board number kept); without it a ``START_POSITION_SET_UP`` event asks the arbiter for one.
        """
        async with self._lock:
            if self._ended is None:
                self._ended = self.engine.state.result != "*"
                self._at_start = self._ended and self._shows_start()
            if not self._ended:
                return
            at_start = self._shows_start()
            if at_start == self._at_start:
                return
            self._at_start = at_start
            if not at_start:
                return
            auto = self.board.auto_new_game
            ended_id = self.game_id
            details: dict[str, object] = {"game_id": ended_id, "result": self.engine.state.result,
                                          "new_game": "started" if auto else "awaiting new-game command"}
            if not auto:
                _LOGGER.info("board %s: game %s has ended and the start position is set up: waiting for a "
                             "new-game command (auto_new_game is off)", self.board.id, ended_id or "-")
                await self._commit(None, self._render([GameEvent(at=at, type="START_POSITION_SET_UP",
                                                                 details=details)], at)[0])
                return
            s = self.engine.state
            defaults = dataclasses.replace(self.board.game, round=s.round, board_no=s.board_no)
            event = default_new_game(at, defaults)
            event = dataclasses.replace(event, game=self.new_game_info(event.game, at))
            details["next_game_id"] = event.game.id
            _LOGGER.info("board %s: game %s has ended and the start position is set up: starting game %s "
                         "(auto_new_game)", self.board.id, ended_id or "-", event.game.id)
            await self._commit(None, self._render([GameEvent(at=at, type="START_POSITION_SET_UP",
                                                             details=details)], at)[0])
            await self._process_locked(event)
            clock = self._clock_command(event)
            if clock is not None:  # queued, not awaited: the board's events must keep flowing
                try:
                    await self.driver.send(clock)
                except DriverError as exc:
                    _LOGGER.warning("board %s: could not set the physical clock: %s", self.board.id, exc)

    def _check_against_state(self, parsed: ParsedCommand) -> None:
        event = parsed.event
        known = {irr.id: irr for irr in self.engine.irregularities}
        if isinstance(event, ev.Acknowledge | ev.Resolve) and event.irregularity_id not in known:
            raise CommandError(f"unknown irregularity {event.irregularity_id!r} in game {self.game_id}",
                               command_id=parsed.id, name=parsed.name)
        if isinstance(event, ev.Reopen):
            error = self.engine.dismissals.reopen_error(event.irregularity_id)
            if error is not None:
                raise CommandError(f"{error} (game {self.game_id})", command_id=parsed.id, name=parsed.name)
        if isinstance(event, ev.FillGap):
            error = self.engine.downtime.fill_error(event.ply, event.moves)
            if error is not None:
                raise CommandError(error, command_id=parsed.id, name=parsed.name)
        if isinstance(event, ev.Reinstate) and event.ply > self.engine.state.ply:
            raise CommandError(f"cannot reinstate ply {event.ply}: the record has {self.engine.state.ply} plies",
                               command_id=parsed.id, name=parsed.name)

    def _clock_command(self, event: ev.Event) -> Any:
        """The driver's ``SetClock`` for a new-game/set-clock when a driver is connected (None: not applicable)."""
        if self.driver is None or not isinstance(event, ev.NewGame | ev.SetClock):
            return None
        if isinstance(event, ev.NewGame):
            seconds = _first_period_s(event.game.time_control)
            if seconds is None:
                return None
            white = black = seconds
        else:
            white, black = round(event.white), round(event.black)
        try:
            from drivers.base import SetClock  # noqa: PLC0415

            left, right = (white, black) if self.board.rules.white_clock_side is ev.ClockSide.LEFT else (black, white)
            return SetClock(left_s=int(left), right_s=int(right), running=None)
        except (ValueError, ImportError) as exc:
            _LOGGER.warning("board %s: cannot set the physical clock to %s/%s: %s", self.board.id, white, black, exc)
            return None

    async def _set_physical_clock(self, command: Any) -> dict[str, object]:
        """Set the physical clock and wait for its answer: the ``clock_*`` fields of the command's result.

        ``clock_set`` is true only when the clock acknowledged the setting; ``clock_answer`` says what
        happened: ``ack``, ``refused`` (the clock answered with an error, e.g. a DGT clock not in
        mode 23), ``not confirmed`` (no answer within :data:`CLOCK_ANSWER_S`, or a driver that cannot
        report one) or ``failed`` (not sent: link down, no clock). Waits outside the pipeline's lock.
        """
        confirm = getattr(self.driver, "send_confirmed", None)
        error: str
        try:
            async with asyncio.timeout(CLOCK_ANSWER_S):
                if confirm is None:
                    await self.driver.send(command)
                    answer, error = "not confirmed", "the driver does not report the clock's answer"
                elif await confirm(command):
                    return {"clock_set": True, "clock_answer": "ack"}
                else:
                    answer, error = "refused", "the clock refused the setting (a DGT clock must be in mode 23)"
        except TimeoutError:
            answer, error = "not confirmed", "the clock did not acknowledge the setting"
        except DriverError as exc:
            answer, error = "failed", f"could not set the physical clock: {exc}"
        _LOGGER.warning("board %s: physical clock %s: %s", self.board.id, answer, error)
        return {"clock_set": False, "clock_answer": answer, "clock_error": error}

    # -- MQTT callbacks -------------------------------------------------------------------

    def _links(self) -> tuple[dict[str, object], dict[str, object]]:
        info = getattr(self.driver, "info", None)
        board_link: dict[str, object] = {"driver": self.board.driver.kind, "port": self.board.driver.port,
                                         "serial": None, "connected": False}
        clock_link: dict[str, object] = {"model": None, "connected": False}
        if info is not None:
            board_link.update(port=info.port, serial=info.serial, connected=bool(info.connected))
            clock_link.update(model=info.clock_model, connected=info.clock_model is not None)
        return board_link, clock_link

    def online_status(self) -> Publication:
        """The status published at every connect."""
        board_link, clock_link = self._links()
        state = "online" if board_link["connected"] else "degraded"
        return self._pub().status(state=state, board_link=board_link, clock_link=clock_link,
                                  at=self.timeline.now(), software=__version__)

    def offline_status(self) -> Publication:
        """The status published at a clean shutdown."""
        board_link, clock_link = self._links()
        return self._pub().status(state="offline", board_link={**board_link, "connected": False},
                                  clock_link={**clock_link, "connected": False}, at=self.timeline.now())

    async def on_connect(self) -> None:
        """Append the online status and the current state and pgn to the outbox (after anything older)."""
        async with self._lock:
            pubs = [self.online_status(), *self._pub().snapshot(self.engine.state, at=self.timeline.now())]
            await self._commit(None, pubs)
        self._notify_status(f"board {self.board.id}: connected to {self.config.mqtt.host}:{self.config.mqtt.port}, "
                            f"game {self.game_id}, {self.engine.state.ply} plies")

    # -- tasks ----------------------------------------------------------------------------

    async def read_board(self) -> None:
        """Feed every driver event through the pipeline (task ``board-<id>``)."""
        assert self.driver is not None
        try:
            async for raw in self.driver.events():
                self._progress(f"board:{self.board.id}")
                event = self._on_time_line(raw)
                try:
                    await self.process(event)
                    if self._ended is not False:
                        await self.watch_next_game(event.at)
                except Exception:
                    _LOGGER.exception("board %s: pipeline failed on %r", self.board.id, event)
        except DriverError as exc:
            # Permanent (a port that can never work): stop cleanly so the offline status goes out.
            _LOGGER.error("board %s: driver failed permanently: %s", self.board.id, exc)
            self.fatal = exc
            self.on_fatal()

    def _on_time_line(self, event: ev.BoardEvent) -> ev.BoardEvent:
        """Re-stamp an event a driver stamped on another clock (not our ``time_source``); warn once."""
        now = self.timeline.now()
        if abs(event.at - now) <= MAX_STAMP_SKEW_S:
            return event
        if not self._skew_warned:
            self._skew_warned = True
            _LOGGER.warning("board %s: driver stamped an event %.0f s away from the daemon's time line; "
                            "re-stamping on receipt (driver ignores time_source?)", self.board.id, event.at - now)
        self.stats["restamped"] += 1
        return dataclasses.replace(event, at=now)

    async def run_timers(self, idle: float | None = None) -> None:
        """Sleep until the engine's next deadline (or a new event), then advance (task ``timer-<id>``).

        Every turn also reports board progress while the driver is active (:meth:`driver_active`);
        *idle* (default: :data:`TIMER_IDLE_S`, at most a third of the stall limit) bounds the sleep.
        """
        if idle is None:
            idle = min(TIMER_IDLE_S, self.driver_stall_after / 3)
        loop = asyncio.get_running_loop()
        # the engine's search in steps (work, below): this task does them, between the loop's other work
        self.engine.stepwise = True
        try:
            await self._run_timers(loop, idle)
        finally:
            self.engine.stepwise = False  # a search in progress goes on at once at the engine's next call

    async def _run_timers(self, loop: asyncio.AbstractEventLoop, idle: float) -> None:
        while True:
            if self.engine.busy:
                await self.work()
            self._deadline_changed.clear()
            deadline = self.engine.next_deadline()
            timeout = idle if deadline is None else max(0.0, self.timeline.mono_of(deadline) - time.monotonic())
            timeout = min(timeout, idle)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(loop.time() + timeout):
                    await self._deadline_changed.wait()
            if self.engine.next_deadline() is not None:
                await self.advance()
            await self.refresh_clock_model()
            if self.driver_active():
                self._progress(f"board:{self.board.id}")

    async def refresh_clock_model(self) -> None:
        """Publish the clock's model once the driver has identified it (a clock plugged in after start-up)."""
        model = getattr(getattr(self.driver, "info", None), "clock_model", None)
        if not isinstance(model, str) or model == self._clock_model or self.publisher is None:
            return
        self._clock_model = model
        async with self._lock:
            publication = self._pub().clock_model(model, at=self.timeline.now())
            if publication is not None:
                _LOGGER.info("board %s: clock identified: %s", self.board.id, model)
                await self._commit(None, [publication])

    def driver_task_alive(self) -> bool:
        """True while the board reader task runs (set by :func:`serve`)."""
        task = self.reader_task
        return task is not None and not task.done()

    def driver_active(self) -> bool:
        """True while the reader task runs and the driver's loop turns.

        The driver's ``last_activity`` (bytes from the device, or a reconnect attempt while it is
        unplugged) must be younger than :attr:`driver_stall_after`; a driver without that attribute
        (or with a value on another clock) is judged by its reader task alone. Logs, and sets
        ``STATUS=``, when the driver hangs and when it recovers.
        """
        if not self.driver_task_alive():
            return False
        raw = getattr(self.driver, "last_activity", None)
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            return True
        age = self.timeline.now() - float(raw)
        if not age >= -MAX_STAMP_SKEW_S:  # NaN, or a driver ignoring time_source
            if not self._activity_clock_warned:
                self._activity_clock_warned = True
                _LOGGER.warning("board %s: driver last_activity %.0f s in the future (driver ignores "
                                "time_source?); judging the driver by its reader task only", self.board.id, -age)
            return True
        hung = age > self.driver_stall_after
        if hung and not self._driver_hung:
            driver = self.board.driver
            text = (f"board {self.board.id}: driver {driver.kind} on {driver.port or '-'} hung: no activity "
                    f"(no bytes from the device, no reconnect attempt) for {age:.1f} s")
            _LOGGER.error("%s; withholding its watchdog progress", text)
            self._notify_status(text)
        elif not hung and self._driver_hung:
            _LOGGER.warning("board %s: driver active again", self.board.id)
        self._driver_hung = hung
        return not hung

    async def prune_loop(self) -> None:
        """Retention: archive and prune old games at start and every hour."""
        journal = self.journal
        assert journal is not None
        cfg = self.board.journal
        while True:
            try:
                await self._aj().call(journal.prune, archive_dir=cfg.archive_dir, retention_days=cfg.retention_days)
            except Exception:
                _LOGGER.exception("board %s: journal retention failed", self.board.id)
            await asyncio.sleep(PRUNE_EVERY_S)


def _open_driver(runtime: BoardRuntime) -> Any:
    driver_cfg = runtime.board.driver
    if runtime.driver_factory is not None:
        return runtime.driver_factory(driver_cfg.kind, dict(driver_cfg.options), time_source=runtime.timeline.now)
    if driver_cfg.kind == "external":
        options = dict(driver_cfg.options)
        module_name, _, name = str(options.pop("factory")).partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), name)
        except (ImportError, AttributeError) as exc:
            raise DriverError(f"board {runtime.board.id}: cannot load driver factory {module_name}:{name}: {exc}") \
                from exc
        return factory(options, time_source=runtime.timeline.now)
    from drivers.base import open_driver, options_from_mapping  # noqa: PLC0415

    typed_options = options_from_mapping(driver_cfg.kind, dict(driver_cfg.options))
    return open_driver(driver_cfg.kind, typed_options, time_source=runtime.timeline.now)


async def serve(config: Config, *, boards: Sequence[str] = (), stop: asyncio.Event | None = None,
                driver_factory: Callable[..., Any] | None = None) -> int:
    """Run the daemon for *boards* (all when empty) until *stop* is set or SIGTERM/SIGINT.

    Returns:
        The exit status: 0 after a clean shutdown, 1 when a driver failed permanently.

    Raises:
        ConfigError: a selected board is not in the configuration.
        JournalError: a journal cannot be opened.
    """
    from boardd.daemon.sdnotify import Notifier, ProgressWatchdog  # noqa: PLC0415

    selected = [config.board(b) for b in boards] if boards else list(config.boards)
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
    notifier = Notifier.from_environment(unset_environment=True)
    components = [f"{kind}:{b.id}" for b in selected for kind in ("board", "mqtt")]
    watchdog = ProgressWatchdog(notifier, components=components)
    runtimes = [BoardRuntime(b, config, driver_factory=driver_factory, progress=watchdog.progress,
                             notify_status=notifier.status, driver_stall_after=watchdog.stall_after)
                for b in selected]
    for rt in runtimes:
        rt.on_fatal = stop.set
    try:
        for rt in runtimes:
            await asyncio.to_thread(rt.open)
            assert rt.journal is not None
            rt.ajournal = AsyncJournal(rt.journal)
        async with contextlib.AsyncExitStack() as stack:
            for rt in runtimes:
                started_at = rt.timeline.now()
                rt.driver = _open_driver(rt)
                await stack.enter_async_context(rt.driver)
                await rt.announce()
                await rt.mark_restart(at=started_at)
                await rt.ensure_game(at=started_at)
            notifier.ready(f"{len(runtimes)} board(s) running")
            await _run_tasks(runtimes, config, stop, watchdog)
    finally:
        notifier.stopping()
        for rt in runtimes:
            if rt.ajournal is not None:
                await rt.ajournal.aclose()
            elif rt.journal is not None:
                rt.journal.close()
        for sig in installed:
            loop.remove_signal_handler(sig)
    failed = [rt for rt in runtimes if rt.fatal is not None]
    if failed:
        for rt in failed:
            print(f"boardd: board {rt.board.id}: {rt.fatal}", file=sys.stderr)
        return 1
    _LOGGER.info("boardd stopped cleanly")
    return 0


async def _run_tasks(runtimes: Sequence[BoardRuntime], config: Config, stop: asyncio.Event,
                     watchdog: Any) -> None:
    async with asyncio.TaskGroup() as tg:
        workers: list[asyncio.Task[None]] = []
        links: list[asyncio.Task[None]] = []
        for rt in runtimes:
            bid = rt.board.id
            rt.link = MqttLink(config=config.mqtt, client_id=config.mqtt.client_id_for(bid), root=rt._pub().root,
                               journal=rt._aj(), will=rt._pub().will(), session=rt._pub().session,
                               on_connect=rt.on_connect, on_command=rt.on_command,
                               on_progress=functools.partial(watchdog.progress, f"mqtt:{bid}"))
            reader = tg.create_task(rt.read_board(), name=f"board-{bid}")
            rt.reader_task = reader
            workers.append(reader)
            workers.append(tg.create_task(rt.run_timers(), name=f"timer-{bid}"))
            workers.append(tg.create_task(rt.prune_loop(), name=f"prune-{bid}"))
            links.append(tg.create_task(rt.link.run(final=rt.offline_status), name=f"mqtt-{bid}"))
        workers.append(tg.create_task(watchdog.run(), name="watchdog"))
        await stop.wait()
        _LOGGER.info("stopping: %s", ", ".join(f"{rt.board.id} {rt.stats}" for rt in runtimes))
        for task in workers:
            task.cancel()
        for rt in runtimes:
            assert rt.link is not None
            rt.link.stop()


class JournalFormatter(logging.Formatter):
    """``<N>logger: message`` lines: journald reads the ``<N>`` syslog priority prefix (sd-daemon(3))."""

    def format(self, record: logging.LogRecord) -> str:
        """Prefix the priority; multi-line messages (tracebacks) keep it on the first line."""
        if record.levelno >= logging.ERROR:
            priority = 3
        elif record.levelno >= logging.WARNING:
            priority = 4
        elif record.levelno >= logging.INFO:
            priority = 6
        else:
            priority = 7
        return f"<{priority}>{record.name}: {super().format(record)}"


def apply_logging(level: str, fmt: str, verbose: int) -> None:
    """Apply the ``[logging]`` section: the level unless ``-v`` was given, and the journald format."""
    root = logging.getLogger()
    if verbose == 0:
        root.setLevel({"trace": 5, "debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
                       "error": logging.ERROR}[level])
    if fmt == "journal":
        for handler in root.handlers:
            handler.setFormatter(JournalFormatter("%(message)s"))


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``boardd run``."""
    parser.add_argument("--config", "-c", required=True, metavar="FILE", help="the TOML configuration file")
    parser.add_argument("--board", action="append", default=[], metavar="ID",
                        help="run only this board (repeatable; for boardd@ID.service); default: all boards")


def run(args: argparse.Namespace) -> int:
    """``boardd run --config FILE [--board ID]``."""
    try:
        config = load_config(args.config)
        apply_logging(config.logging.level, config.logging.format, getattr(args, "verbose", 0))
        take_realtime()  # before asyncio starts any thread: the journal's and the drivers' threads inherit it
        return asyncio.run(serve(config, boards=args.board))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BoarddError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
