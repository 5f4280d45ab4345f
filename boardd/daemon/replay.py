"""``boardd replay``: run an event log (or a device capture) through the engine; print what would be published.

Theory of operation
-------------------
The input is a boardd event log (JSON Lines, ``docs/event-log.md``, read by
:mod:`boardd.core.eventlog`) from a file or stdin (``-``), or, with ``--driver``, a
device capture that ``drivers.capture.events_from_capture`` turns into board
events. An :class:`~boardd.core.engine.Engine` is built from the log header's rules
and game (``--edition``/``--time-control`` override the game, including the
game of every ``new-game`` line), and a :class:`~boardd.core.contract.Publisher`
with session 1.

The run mirrors the daemon (:mod:`boardd.daemon.service`):

1. the last will is registered (it takes ``seq`` 1 and is not printed: the
   broker only sends it when the daemon dies), then the ``status`` (online)
   publication, then the retained ``state`` and ``pgn`` of the initial game,
   as on every MQTT connect;
2. before each event, every engine timer due strictly before the event's time
   fires, with its publications stamped at the deadline (the daemon's timer
   task); then the event is fed (``Engine.feed`` fires earlier timers itself,
   with the same semantics);
3. after the last event, the remaining timers fire.

Every publication is printed as one line of the contract's "Replay output"
form, ``{"topic": ..., "retain": ..., "qos": ..., "payload": ...}``
(:meth:`~boardd.core.contract.Publication.replay_line`). ``ts`` and event-time
fields come from :func:`~boardd.core.contract.iso_timestamp` of the event times, so
the same input gives byte-identical output, and the run takes as long as the
computing, not as long as the game. Nothing but publications goes to stdout;
logs and the summary line go to stderr. A bad line is logged with its line
number, counted and skipped, never fatal.

``--pgn-only`` prints the PGN of every game in the input instead (a ``new-game``
line closes the previous game), as one PGN archive.

``--final`` (for bulk replays) runs the engine alone, rendering nothing on the way, and prints
only the retained ``state`` and ``pgn`` of the end of the input: the two lines a subscriber
gets after the last event: the last ``state`` and ``pgn`` of the full output, with another
``seq`` (2 and 3: nothing else was published after the last will) and the ``ts`` of the last
event or timer.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
import io
import itertools
import logging
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from boardd.core.clock import TimeControl
from boardd.core.contract import Publication, Publisher, iso_timestamp, validate_board_id
from boardd.core.engine import Engine
from boardd.core.errors import BoarddError, ConfigError, EventLogError
from boardd.core.eventlog import LogHeader, read_events, read_header
from boardd.core.events import VARIANTS, Event, GameInfo, NewGame
from boardd.core.outputs import GameState, Output, StateChanged
from boardd.core.record import archive_pgn
from boardd.core.settings import EDITIONS, RulesConfig

__all__ = ["DRIVERS", "Replay", "ReplayOptions", "ReplayStats", "configure_parser", "run"]

_LOGGER = logging.getLogger(__name__)

#: Device families whose captures ``--driver`` replays (``drivers.capture``).
DRIVERS = ("dgt", "millennium", "chessnut", "certabo")

#: Board id when neither ``--board`` nor the log header gives one.
DEFAULT_BOARD = "sim"

#: Bound on timer firings at one instant (a timer that re-arms at the same time would loop forever).
_MAX_TIMER_ROUNDS = 10_000


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayOptions:
    """What the command line can change.

    Attributes:
        board: board id (overrides the header's).
        prefix: topic prefix.
        edition: edition of the Laws (overrides the game's).
        time_control: time control (overrides the game's).
        driver: the device family of a capture, ``None`` for an event log.
        variant: ``standard``, ``chess960`` or ``auto`` (overrides the game's); a capture without a header
            replays with ``auto`` unless given.
        final: render nothing until the end, then only the final ``state`` and ``pgn``.
    """

    board: str | None = None
    prefix: str = "boardd"
    edition: int | None = None
    time_control: str | None = None
    driver: str | None = None
    variant: str | None = None
    final: bool = False


@dataclass(slots=True)
class ReplayStats:
    """Counters for the summary line."""

    events: int = 0
    publications: int = 0
    bad_lines: int = 0
    failed_events: int = 0
    timers: int = 0
    games: int = 1
    moves: int = 0

    def summary(self) -> str:
        """One line for stderr."""
        return (f"replay: {self.events} events, {self.publications} publications, {self.bad_lines} bad lines, "
                f"{self.failed_events} failed events, {self.timers} timer firings, {self.games} games, "
                f"{self.moves} moves in the final record")


class Replay:
    """One replay: engine + publisher, fed with events; yields publications.

    Args:
        header: the log header (rules, game, board), or None.
        options: command-line overrides.

    Raises:
        ConfigError: invalid board id, prefix, edition or time control.
    """

    def __init__(self, header: LogHeader | None = None, options: ReplayOptions | None = None) -> None:
        self.options = options or ReplayOptions()
        self.stats = ReplayStats()
        rules = header.rules if header is not None else RulesConfig()
        game = header.game if header is not None and header.game is not None else GameInfo()
        if header is None and self.options.driver is not None:
            # a device capture does not say which time control was played: unknown ("?"), not a default
            # the clock readings would then contradict (CLOCK_SETTING_SUSPECT, period checks)
            # nor the variant: a valid Chess960 start array on the board is taken as such (variant auto)
            game = dataclasses.replace(game, time_control="?", variant="auto")
        self._check_overrides()
        self.engine = Engine(rules, self._override(game))
        self.publisher = Publisher(board=self._board_id(header), prefix=self.options.prefix, session=1, seq=0,
                                   ts=iso_timestamp)
        self.finished_games: list[GameState] = []
        self._started = False
        self._last_at = 0.0

    def _check_overrides(self) -> None:
        options = self.options
        if options.edition is not None and options.edition not in EDITIONS:
            raise ConfigError(f"edition must be one of {', '.join(map(str, EDITIONS))}, got {options.edition}",
                              key="edition")
        if options.time_control is not None:
            TimeControl.parse(options.time_control)

    def _board_id(self, header: LogHeader | None) -> str:
        if self.options.board is not None:
            return validate_board_id(self.options.board)
        if header is not None and header.board:
            try:
                return validate_board_id(header.board)
            except ConfigError:
                _LOGGER.warning("header board %r is not a valid board id; using %r", header.board, DEFAULT_BOARD)
        return DEFAULT_BOARD

    def _override(self, game: GameInfo) -> GameInfo:
        if self.options.edition is not None:
            game = dataclasses.replace(game, edition=self.options.edition)
        if self.options.time_control is not None:
            game = dataclasses.replace(game, time_control=self.options.time_control)
        if self.options.variant is not None:
            game = dataclasses.replace(game, variant=self.options.variant,
                                       chess960=game.chess960 or self.options.variant == "chess960")
        return game

    def _emit(self, publications: list[Publication]) -> list[Publication]:
        self.stats.publications += len(publications)
        return publications

    def _render(self, outputs: list[Output], at: float) -> list[Publication]:
        self._last_at = at
        if not outputs or self.options.final:
            return []
        # Publisher.render reads the state only for a StateChanged; building it costs, so only then.
        state = self.engine.state if any(isinstance(output, StateChanged) for output in outputs) else None
        return self._emit(self.publisher.render(outputs, state, at=at))

    def start(self, at: float) -> list[Publication]:
        """What the daemon publishes on connect: ``status`` (online), then ``state`` and ``pgn``."""
        self._started = True
        self.publisher.will(at=at)
        if self.options.final:
            return []
        status = self.publisher.status(
            state="online",
            board_link={"driver": self.options.driver or "replay", "port": None, "serial": None, "connected": True},
            clock_link={"model": None, "connected": False},
            at=at,
        )
        return self._emit([status, *self.publisher.snapshot(self.engine.state, at=at)])

    def fire_timers(self, before: float | None) -> list[Publication]:
        """Fire engine timers due strictly before *before* (every pending timer when None)."""
        publications: list[Publication] = []
        last: float | None = None
        rounds = 0
        while (deadline := self.engine.next_deadline()) is not None:
            if before is not None and deadline >= before:
                break
            if last is not None and deadline <= last:
                rounds += 1
                if rounds > _MAX_TIMER_ROUNDS:
                    _LOGGER.error("engine timer at %.3f s keeps re-arming; stopped firing it", deadline)
                    break
            last = deadline
            self.stats.timers += 1
            publications += self._render(self.engine.advance(deadline), deadline)
        return publications

    def feed(self, event: Event, line_no: int | None = None) -> list[Publication]:
        """Timers due before the event, then the event; their publications."""
        at = event.at
        publications = self.start(at) if not self._started else []
        deadline = self.engine.next_deadline()
        if deadline is not None and deadline < at:  # (most events come with no timer due)
            publications += self.fire_timers(at)
        self._last_at = at
        if isinstance(event, NewGame):
            previous = self.engine.state
            if previous.ply or previous.result != "*":
                self.finished_games.append(previous)
            event = dataclasses.replace(event, game=self._override(event.game))
        self.stats.events += 1
        try:
            outputs = self.engine.feed(event)
            if outputs and not self.options.final:  # (_render of nothing, or with --final, renders nothing)
                publications += self._render(outputs, event.at)
        except Exception:
            # The engine promises not to raise; if it does, the replay goes on with the next event.
            self.stats.failed_events += 1
            _LOGGER.exception("line %s: processing %r failed", line_no if line_no is not None else "?", event)
        return publications

    def finish(self) -> list[Publication]:
        """Fire the remaining timers (and publish the start if there was no event at all)."""
        publications = [] if self._started else self.start(0.0)
        publications += self.fire_timers(None)
        if self.options.final:
            publications += self._emit(self.publisher.snapshot(self.engine.state, at=self._last_at))
        self.stats.moves = self.engine.state.ply
        self.stats.games = len(self.games())
        return publications

    def games(self) -> list[GameState]:
        """Every game seen, the current one last."""
        return [*self.finished_games, self.engine.state]

    def run(self, events: Iterable[tuple[int | None, Event]]) -> Iterator[Publication]:
        """All publications for *events*, start to finish."""
        for line_no, event in events:
            yield from self.feed(event, line_no)
        yield from self.finish()

    def run_unnumbered(self, events: Iterable[Event]) -> Iterator[Publication]:
        """:meth:`run` of events that have no line numbers (a device capture's)."""
        feed = self.feed
        if self.options.final:
            for event in events:
                feed(event)  # (with --final nothing is published before the end: feed returns [])
        else:
            for event in events:
                yield from feed(event)
        yield from self.finish()


# --- Command line ---------------------------------------------------------------------------


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``boardd replay``."""
    parser.add_argument("input", help="event log (JSON Lines) or, with --driver, a device capture; - for stdin")
    parser.add_argument("--board", help=f"board id (default: the log header's, else {DEFAULT_BOARD!r})")
    parser.add_argument("--prefix", default="boardd", help="topic prefix (default boardd)")
    parser.add_argument("--edition", type=int, choices=EDITIONS, help="edition of the Laws (overrides the log)")
    parser.add_argument("--time-control", help="time control in PGN form, e.g. 900+10 (overrides the log)")
    parser.add_argument("--variant", choices=VARIANTS,
                        help="standard, chess960 (start array from the board unless the log gives one) or auto "
                             "(a Chess960 start array on the board is taken as such); default: the log's, "
                             "auto for a capture")
    parser.add_argument("--pgn-only", action="store_true", help="print the PGN of the game(s) instead")
    parser.add_argument("--final", action="store_true",
                        help="print only the final state and PGN (bulk replays: nothing is rendered on the way)")
    parser.add_argument("--driver", choices=DRIVERS,
                        help="the input is a capture of this device family ({\"t\",\"rx\"} JSON Lines or raw bytes)")


def _log_bad_line(stats: ReplayStats) -> Callable[[EventLogError], None]:
    def on_error(error: EventLogError) -> None:
        stats.bad_lines += 1
        _LOGGER.warning("bad line skipped; %s", error)
    return on_error


def _capture_events(path: str, driver: str, stats: Counter[str]) -> Iterator[Event]:
    """Events of a device capture, through ``drivers.capture`` (imported only here).

    Raises:
        BoarddError: ``drivers.capture`` is not available, or it cannot read the capture at all
            (``CaptureError``: unknown family, unreadable file).
    """
    try:
        capture = importlib.import_module("drivers.capture")
    except ImportError as exc:
        raise BoarddError(f"device captures need drivers.capture, which is not available: {exc}") from None
    events_from_capture = getattr(capture, "events_from_capture", None)
    if events_from_capture is None:
        raise BoarddError("drivers.capture has no events_from_capture()")
    events: Iterator[Event] = iter(events_from_capture(Path(path), driver, stats=stats))
    # Start reading now: an unknown family or an unreadable file is a usage error, before any output.
    first = next(events, None)
    return events if first is None else itertools.chain((first,), events)


def _open_text(path: str) -> IO[str]:
    """The log as text: UTF-8 whatever the locale (a BOM is dropped, undecodable bytes become U+FFFD
    and the JSON of that line is then reported as bad, not the whole input)."""
    if path == "-":
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig", errors="replace")
    return open(path, encoding="utf-8-sig", errors="replace")


def run(args: argparse.Namespace) -> int:
    """``boardd replay``: 0 when the input was read to the end (bad lines included), 1 on a read failure,
    2 on a usage error (missing file, bad option)."""
    options = ReplayOptions(board=args.board, prefix=args.prefix, edition=args.edition,
                            time_control=args.time_control, driver=args.driver,
                            variant=getattr(args, "variant", None),
                            final=bool(getattr(args, "final", False)))
    out = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else None
    status = 0
    capture_stats: Counter[str] = Counter()   # drivers.capture counts its bad lines here
    try:
        if options.driver is not None:
            source = "/dev/stdin" if args.input == "-" else args.input
            if not Path(source).exists():
                raise FileNotFoundError(source)
            header: LogHeader | None = None
            replay = Replay(header, options)
            publications = replay.run_unnumbered(_capture_events(source, options.driver, capture_stats))
        else:
            stream = _open_text(args.input)
            try:
                lines = stream.readlines()
            finally:
                if args.input != "-":
                    stream.close()
            try:
                header = read_header(lines)
            except EventLogError as exc:
                _LOGGER.debug("header unreadable (%s); defaults used", exc)   # read_events reports the line
                header = None
            replay = Replay(header, options)
            publications = replay.run(read_events(lines, on_error=_log_bad_line(replay.stats)))
    except (OSError, ConfigError, BoarddError) as exc:
        print(f"boardd replay: {exc}", file=sys.stderr)
        return 2
    try:
        for publication in publications:
            if not args.pgn_only:
                _write_publication(out, publication)
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as Python's docs recommend.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except (OSError, BoarddError, ValueError) as exc:
        # A capture that cannot be read further: keep what was replayed, report, fail.
        _LOGGER.error("input stopped: %s", exc)
        for publication in replay.finish():
            if not args.pgn_only:
                _write_publication(out, publication)
        status = 1
    if args.pgn_only:
        _write(out, archive_pgn(replay.games()).rstrip("\n"))
    if out is not None:
        out.flush()
    sys.stdout.flush()
    replay.stats.bad_lines += capture_stats["bad_lines"]
    print(replay.stats.summary(), file=sys.stderr)
    return status


#: A payload at least this long (a ``state`` or ``pgn`` of a long game) is written apart from its line's start
#: and end, not joined with them (issue 12: a join copies the whole line, and its encoding copies it again).
_LONG_PAYLOAD = 2048


@functools.lru_cache(maxsize=64)
def _encoded(text: str) -> bytes:
    """*text* as UTF-8 (the starts of the lines: a few topics)."""
    return text.encode("utf-8")


def _write_publication(out: IO[bytes] | None, publication: Publication) -> None:
    """Write :meth:`~boardd.core.contract.Publication.replay_line` and a newline, as UTF-8 (as :func:`_write`)."""
    head, payload = publication.replay_parts()
    if out is None or len(payload) < _LONG_PAYLOAD:
        if out is not None:
            out.write((head + payload + "}\n").encode("utf-8"))
        else:
            sys.stdout.write(head + payload + "}\n")
        return
    out.write(_encoded(head))
    out.write(payload.encode("utf-8"))
    out.write(b"}\n")


def _write(out: IO[bytes] | None, line: str) -> None:
    """Write one line as UTF-8 whatever the locale (byte-identical output)."""
    if out is not None:
        out.write(line.encode("utf-8"))   # (not + b"\n": a state or pgn line is as long as the game, issue 12)
        out.write(b"\n")
    else:
        sys.stdout.write(line + "\n")
