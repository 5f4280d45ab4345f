"""The simulator as a board driver: the pure simulator's events, paced in (scaled) real time.

This is the thin asyncio half. :func:`drivers.sim.simulate_game` computes the
whole game up front; :class:`SimulatedBoard` only waits between events
(``asyncio.sleep`` of the simulated gap divided by ``tempo``) and re-stamps each
event with the injected ``time_source`` when it is delivered, as a hardware
driver stamps on receipt. With ``tempo`` above 1 the gaps the engine sees shrink by
the same factor (a 400 ms settle becomes 40 ms at tempo 10), so the recogniser's
timing parameters (rules-spec 2.4) no longer describe human handling: use tempo 1
with the daemon, higher tempi for demos of the data flow and for tests that do
not judge handling. Arbiter commands in the simulated game (``NewGame``,
``Reinstate``, ``SetClock``, ``SetResult``) are not board events: the driver does
not deliver them (in a hall they come from the arbiter's tablet); ``boardd
simulate`` writes them into the event log.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import AsyncGenerator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

import chess
import chess.pgn

from boardd.core.errors import ConfigError, DriverError
from boardd.core.events import BoardEvent, BoardSnapshot, ClockReading, Content, Link, LinkChanged, SquareChanged
from drivers.base import DeviceInfo, DriverCommand, RequestDump, UnsupportedCommandError
from drivers.sim._core import PROFILES, simulate_game
from drivers.sim._games import random_game
from drivers.sim._inject import Injection

__all__ = ["Options", "SimulatedBoard", "create_driver", "load_pgn_game"]

_LOGGER = logging.getLogger(__name__)

#: Pause between two games when the driver loops (seconds of simulated time).
_BETWEEN_GAMES = 10.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    """``[driver.sim]`` options.

    Attributes:
        port: ``"random"`` for seeded random games, or the path of a PGN file.
        game: 1-based number of the game in the PGN file.
        seed: seed of the random game and of the handling.
        profile: handling profile (``clean``, ``casual``, ``clumsy``).
        tempo: speed factor (10 plays ten times faster than real time).
        time_control: PGN TimeControl of the clock (default: the game's, else FIDE standard).
        injections: irregularities to inject, as ``KIND@PLY`` strings.
        loop: play game after game (next seed, or next game of the file) instead of stopping.
    """

    port: str = "random"
    game: int = 1
    seed: int = 0
    profile: str = "casual"
    tempo: float = 1.0
    time_control: str | None = None
    injections: tuple[str, ...] = ()
    loop: bool = False

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ConfigError(f"profile must be one of {', '.join(PROFILES)}, got {self.profile!r}",
                              key="driver.sim.profile")
        if not isinstance(self.tempo, (int, float)) or not 0 < self.tempo <= 10_000:
            raise ConfigError(f"tempo must be in (0, 10000], got {self.tempo!r}", key="driver.sim.tempo")
        if not isinstance(self.game, int) or self.game < 1:
            raise ConfigError(f"game must be a positive integer, got {self.game!r}", key="driver.sim.game")
        for text in self.injections:
            try:
                Injection.parse(text)
            except ValueError as exc:
                raise ConfigError(str(exc), key="driver.sim.injections") from None


def load_pgn_game(path: str | Path, number: int = 1) -> chess.pgn.Game:
    """Game *number* (1-based) of a PGN file.

    Raises:
        DriverError: the file cannot be read, or has fewer games.
    """
    try:
        with Path(path).open(encoding="utf-8-sig") as stream:
            for _ in range(number - 1):
                if chess.pgn.skip_game(stream) is False:
                    break
            game = chess.pgn.read_game(stream)
    except OSError as exc:
        raise DriverError(f"cannot read PGN {path}: {exc}") from exc
    if game is None:
        raise DriverError(f"{path} has no game number {number}")
    return game


def create_driver(options: Options, *, time_source: Callable[[], float] = time.monotonic) -> SimulatedBoard:
    """The driver factory of the registry (:func:`drivers.base.open_driver`)."""
    return SimulatedBoard(options=options, time_source=time_source)


class SimulatedBoard:
    """A simulated DGT-class board with clock, satisfying :class:`drivers.base.BoardDriver`.

    Use as ``async with SimulatedBoard(options=...) as board: async for event in board.events(): ...``.
    The iterator ends after the last game (or runs forever with ``loop``), or when the
    context exits. ``send(RequestDump())`` makes the next delivered event a snapshot of
    the simulated board.
    """

    def __init__(self, *, options: Options | None = None, game: chess.pgn.Game | None = None,
                 time_source: Callable[[], float] = time.monotonic) -> None:
        self.options = options or Options()
        self._game = game
        self._time_source = time_source
        self._entered = False
        self._closed = asyncio.Event()
        self._dump = asyncio.Event()
        self._board: list[Content] = [None] * 64
        self._last_at = float("-inf")
        self._last_activity = time_source()
        #: Longest real-time wait between two liveness marks (:attr:`last_activity`).
        self.heartbeat_s = 1.0
        self.stats = {"events": 0, "games": 0, "dumps": 0}

    @property
    def info(self) -> DeviceInfo:
        """What the simulated device reports."""
        return DeviceInfo(driver="sim", port=self.options.port, serial=f"sim-{self.options.seed}",
                          version="1", clock_model="dgt3000", connected=self._entered and not self._closed.is_set())

    @property
    def last_activity(self) -> float:
        """``time_source()`` time of the last sign of life: an event delivered, or a wait slice of at most
        :attr:`heartbeat_s` (1 s) elapsed while the simulated players think (the simulated device "streams").

        It stands still when nobody pulls :meth:`events` (the consumer hangs) and after the context exits.
        """
        return self._last_activity

    async def __aenter__(self) -> Self:
        if self._entered:
            raise DriverError("SimulatedBoard is not re-entrant")
        self._entered = True
        self._last_activity = self._time_source()
        _LOGGER.info("simulated board started (%s, profile %s, tempo %s)", self.options.port, self.options.profile,
                     self.options.tempo)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self._closed.set()

    async def send(self, command: DriverCommand) -> None:
        """Only :class:`drivers.base.RequestDump` is supported (the simulated clock cannot be set).

        Raises:
            UnsupportedCommandError: any other command.
        """
        if isinstance(command, RequestDump):
            self._dump.set()
            return
        raise UnsupportedCommandError(command, driver="sim")

    def _games(self) -> Iterator[chess.pgn.Game | None]:
        number = self.options.game
        while True:
            if self._game is not None:
                yield self._game
            elif self.options.port == "random":
                yield None
            else:
                yield load_pgn_game(self.options.port, number)
                number += 1
            if not self.options.loop:
                return

    def _stamp(self, event: BoardEvent) -> BoardEvent:
        at = max(self._time_source(), self._last_at)
        self._last_at = at
        self._last_activity = at
        return dataclasses.replace(event, at=at)

    async def _wait(self, delay: float) -> bool:
        """Sleep *delay* real seconds; False when the context closed meanwhile. A dump request wakes it.

        The wait goes in slices of at most :attr:`heartbeat_s`, each one a sign of life.
        """
        loop = asyncio.get_running_loop()
        end = loop.time() + delay
        while not self._closed.is_set() and not self._dump.is_set():
            remaining = end - loop.time()
            if remaining <= 0:
                break
            sleeper = asyncio.ensure_future(self._closed.wait())
            dump = asyncio.ensure_future(self._dump.wait())
            try:
                await asyncio.wait({sleeper, dump}, timeout=min(remaining, self.heartbeat_s),
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                sleeper.cancel()
                dump.cancel()
            if not self._closed.is_set():
                self._last_activity = self._time_source()
        return not self._closed.is_set()

    async def events(self) -> AsyncGenerator[BoardEvent, None]:
        """The simulated board and clock events, paced by ``tempo`` and stamped on delivery.

        Raises:
            DriverError: the PGN file cannot be read or the simulation cannot be built.
        """
        if not self._entered:
            raise DriverError("use SimulatedBoard as an async context manager")
        injections = [Injection.parse(text) for text in self.options.injections]
        yield self._stamp(LinkChanged(at=0.0, link=Link.BOARD, up=True, detail="simulated board"))
        seed = self.options.seed
        for game in self._games():
            try:
                sim = simulate_game(game if game is not None else random_game(seed), seed=seed,
                                    profile=self.options.profile, injections=injections,
                                    time_control=self.options.time_control)
            except ValueError as exc:
                raise DriverError(f"cannot simulate: {exc}") from exc
            self.stats["games"] += 1
            previous = sim.events[0].at
            for event in sim.events:
                if not isinstance(event, (SquareChanged, BoardSnapshot, ClockReading, LinkChanged)):
                    continue  # arbiter commands are not board events
                due = (event.at - previous) / self.options.tempo
                previous = event.at
                while True:
                    start = asyncio.get_running_loop().time()
                    if not await self._wait(due):
                        return
                    if self._dump.is_set():
                        self._dump.clear()
                        self.stats["dumps"] += 1
                        yield self._stamp(BoardSnapshot(at=0.0, squares=tuple(self._board)))
                        due -= asyncio.get_running_loop().time() - start
                        if due > 0:
                            continue
                    break
                if isinstance(event, SquareChanged):
                    self._board[event.square] = event.content
                elif isinstance(event, BoardSnapshot):
                    self._board = list(event.squares)
                self.stats["events"] += 1
                yield self._stamp(event)
            seed += 1
            injections = []  # injections apply to the first game only
            if not await self._wait(_BETWEEN_GAMES / self.options.tempo):
                return

