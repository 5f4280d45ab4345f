"""The MQTT side of one board: one aiomqtt v2 connection, an outbox drainer, a command reader.

Theory of operation
-------------------
:class:`MqttLink` owns the connection of one board (one client per board, so
that each board has its own last will on its own ``status`` topic). Its
:meth:`~MqttLink.run` loop follows aiomqtt's documented reconnection pattern:
re-enter the reusable ``Client`` context after an :class:`aiomqtt.MqttError`,
sleeping a jittered exponential backoff in between. On every (re)connect it

1. subscribes to its own ``{root}/cmd/#`` (QoS 1): a running ``messages``
   consumer is also how a dead connection gets noticed (aiomqtt #326/#381),
   together with a short keepalive;
2. asks the daemon (``on_connect``) to append the retained ``online`` status
   and the current ``state``/``pgn`` to the outbox, so that they go out
   *after* anything older still waiting there and delivery order stays seq
   order;
3. drains the journal's outbox in order: each row is published with QoS 1 and
   marked acked only after ``publish()`` returned, which in aiomqtt v2 means
   the PUBACK arrived. Once a query found nothing left, rows the daemon has just
   committed are handed over in memory (:meth:`MqttLink.offer`, in commit order)
   instead of being read back from the journal: the outbox stays the record,
   the link skips a round trip to the journal thread on the way to the broker.
   A reconnect drops that hand-over and starts again from the journal.

Delivery is at-least-once: a publish in flight when the connection drops is
sent again (and paho may also resend it on its own after reconnect, see
mqtt-broadcast-systemd.md §1.3), so consumers dedupe on ``(board, session, seq)``.
QoS 0 traffic (clock ticks) bypasses the outbox and is dropped while offline (except the
clock updates a start owes, journaled in the outbox in their place: published with QoS 0 and
marked acked once sent).

Nothing here knows the contract: payloads are bytes made by
:mod:`boardd.core.contract`; the daemon supplies the status and will.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import random
import socket
import ssl
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import aiomqtt

from boardd.daemon.config import MqttConfig
from boardd.daemon.journal import AsyncJournal, OutboxRow, PublicationLike, envelope_seq

__all__ = ["Backoff", "MqttLink", "RawPublication", "tls_context"]

_LOGGER = logging.getLogger(__name__)

#: Rows held for the in-memory hand-over before falling back to reading the journal.
_FRESH_MAX = 1000


@dataclass(frozen=True, slots=True)
class RawPublication:
    """A ready-to-send message (topic, payload bytes, retain, QoS)."""

    topic: str
    payload: bytes
    retain: bool
    qos: int

    def payload_bytes(self) -> bytes:
        """The payload (already bytes)."""
        return self.payload

    @classmethod
    def of(cls, pub: PublicationLike) -> RawPublication:
        """Freeze any publication-like object."""
        return cls(pub.topic, pub.payload_bytes(), pub.retain, pub.qos)


class Backoff:
    """Jittered exponential backoff ("full jitter"): ``uniform(0, min(cap, base * 2**n))``, at least ``floor``."""

    def __init__(self, *, base: float = 0.5, cap: float = 30.0, floor: float = 0.1,
                 rng: random.Random | None = None) -> None:
        self.base = base
        self.cap = cap
        self.floor = floor
        self.attempt = 0
        self._rng = rng or random.Random()

    def next(self) -> float:
        """The next delay in seconds."""
        ceiling = min(self.cap, self.base * (2 ** min(self.attempt, 30)))
        self.attempt += 1
        return max(self.floor, self._rng.uniform(0, ceiling))

    def reset(self) -> None:
        """Connection succeeded: start again from the base delay."""
        self.attempt = 0


def tls_context(config: MqttConfig) -> ssl.SSLContext | None:
    """The SSL context for *config* (None without TLS). Loads files: call it off the event loop.

    Raises:
        OSError: a certificate file cannot be read.
        ssl.SSLError: a certificate file is invalid.
    """
    if config.tls is None:
        return None
    ctx = ssl.create_default_context(cafile=str(config.tls.ca) if config.tls.ca else None)
    if config.tls.cert is not None:
        ctx.load_cert_chain(str(config.tls.cert), str(config.tls.key) if config.tls.key else None)
    if config.tls.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


class MqttLink:
    """The MQTT connection of one board.

    Args:
        config: broker settings.
        client_id: the stable MQTT client id of this board.
        root: ``{prefix}/{board}``.
        journal: the board's journal (its outbox is drained here).
        will: the last-will publication (retained offline status).
        on_connect: awaited after subscribing; appends the ``online`` status and the current
            state/pgn to the outbox, behind anything older, so delivery order stays seq order.
        on_command: awaited for each message on ``{root}/cmd/{name}`` with (name, payload).
    """

    def __init__(self, *, config: MqttConfig, client_id: str, root: str, journal: AsyncJournal,
                 will: PublicationLike,
                 on_connect: Callable[[], Awaitable[None]],
                 on_command: Callable[[str, bytes], Awaitable[None]],
                 on_progress: Callable[[], None] = lambda: None,
                 backoff: Backoff | None = None, publish_timeout: float = 10.0, session: int = 0) -> None:
        self.config = config
        self.client_id = client_id
        self.root = root
        self.journal = journal
        self.will = RawPublication.of(will)
        self.on_connect = on_connect
        self.on_command = on_command
        self.on_progress = on_progress
        self.backoff = backoff or Backoff()
        self.publish_timeout = publish_timeout
        self.session = session
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self._client: aiomqtt.Client | None = None
        self._connected = asyncio.Event()
        self._volatile: collections.deque[tuple[int, RawPublication]] = collections.deque(maxlen=200)
        #: rows committed since the journal was last found drained (commit order), see :meth:`offer`
        self._fresh: collections.deque[OutboxRow] = collections.deque()
        self._caught_up = False
        #: highest outbox id acknowledged by the broker on this connection
        self._acked_upto = 0
        self._published = asyncio.Event()
        self.connects = 0
        self.published = 0

    @property
    def connected(self) -> bool:
        """True while a connection is up."""
        return self._connected.is_set()

    async def wait_connected(self) -> None:
        """Wait until a connection is up."""
        await self._connected.wait()

    def wake(self) -> None:
        """New rows were appended to the outbox."""
        self._wake.set()

    def offer(self, rows: Sequence[OutboxRow]) -> None:
        """Rows just committed to the outbox, in commit order: publish them without reading them back."""
        if not rows:
            return
        if self.connected:
            self._fresh.extend(rows)
            if len(self._fresh) > _FRESH_MAX:  # a long outage of the broker's acks: the journal has them all
                self._fresh.clear()
                self._caught_up = False
        self._wake.set()

    async def wait_acked(self, row_id: int, within: float) -> bool:
        """Wait (at most *within* s) until outbox row *row_id* was acknowledged on this connection.

        Returns at once (False) when not connected or still working through older rows: the
        caller only wants to let a just-committed row go out first, never to wait on a backlog.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while self._acked_upto < row_id:
            if not (self.connected and self._caught_up):
                return False
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            self._published.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._published.wait(), remaining)
        return True

    def publish_volatile(self, pub: PublicationLike) -> None:
        """Send a QoS 0 message if connected; dropped (never queued for long) otherwise."""
        if not self.connected:
            return
        raw = RawPublication.of(pub)
        self._volatile.append((envelope_seq(raw.payload), raw))
        self._wake.set()

    def stop(self) -> None:
        """Ask :meth:`run` to drain briefly, publish the final status and disconnect."""
        self._stop.set()
        self._wake.set()

    async def run(self, *, final: Callable[[], PublicationLike] | None = None, drain_timeout: float = 3.0) -> None:
        """Connect, reconnect forever, until :meth:`stop`; then send *final* (offline status) and return."""
        try:
            tls = await asyncio.to_thread(tls_context, self.config) if self.config.tls else None
        except (OSError, ssl.SSLError) as exc:
            # The board keeps recording into the journal; nothing is published until the files are fixed.
            _LOGGER.error("mqtt %s: TLS configuration unusable (%s): NOT connecting; moves stay in the journal",
                          self.root, exc)
            await self._stop.wait()
            return
        while not self._stop.is_set():
            client = aiomqtt.Client(
                self.config.host, self.config.port, identifier=self.client_id,
                username=self.config.username, password=self.config.password,
                will=aiomqtt.Will(self.will.topic, self.will.payload, qos=1, retain=True),
                keepalive=self.config.keepalive, tls_context=tls,
                tls_insecure=bool(self.config.tls and self.config.tls.insecure) if tls else None,
                timeout=self.publish_timeout,
            )
            try:
                async with client:
                    self._client = client
                    await self._session(client, final, drain_timeout)
                    return
            except* aiomqtt.MqttError as group:
                self._mark_down(group.exceptions[0])
            except* Exception as group:  # a bug must not stop the board from recording: log, back off, retry
                _LOGGER.error("mqtt %s: unexpected error, reconnecting", self.root, exc_info=group.exceptions[0])
            finally:
                self._client = None
                self._connected.clear()
                self._volatile.clear()
                self._fresh.clear()
                self._caught_up = False
                self._published.set()
            if self._stop.is_set():
                return
            delay = self.backoff.next()
            _LOGGER.info("mqtt %s: reconnecting in %.1f s", self.root, delay)
            # The reconnect loop is alive: report progress (an unreachable broker must not get the daemon
            # killed by the systemd watchdog; the board keeps recording into the journal meanwhile).
            self.on_progress()
            deadline = asyncio.get_running_loop().time() + delay
            while not self._stop.is_set():
                remaining = deadline - asyncio.get_running_loop().time()
                if remaining <= 0:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), min(remaining, 5.0))
                self.on_progress()

    def _mark_down(self, exc: BaseException) -> None:
        if self._connected.is_set() or self.backoff.attempt == 0:
            _LOGGER.warning("mqtt %s: connection to %s:%d lost or refused: %s", self.root, self.config.host,
                            self.config.port, exc)
        else:
            _LOGGER.debug("mqtt %s: still cannot connect: %s", self.root, exc)
        self._connected.clear()

    async def _session(self, client: aiomqtt.Client, final: Callable[[], PublicationLike] | None,
                       drain_timeout: float) -> None:
        _disable_nagle(client)
        await client.subscribe(f"{self.root}/cmd/#", qos=1)
        self.connects += 1
        self._fresh.clear()
        self._caught_up = False
        self._acked_upto = 0
        self._connected.set()
        self.backoff.reset()
        _LOGGER.info("mqtt %s: connected to %s:%d as %s", self.root, self.config.host, self.config.port,
                     self.client_id)
        self.on_progress()
        await self.on_connect()
        async with asyncio.TaskGroup() as tg:
            reader = tg.create_task(self._read_commands(client), name=f"mqtt-cmd-{self.root}")
            await self._drain(client)
            # stop requested: flush what is left (bounded), then the offline status. From the journal, not only the
            # rows handed over: a pipeline task cancelled by the stop while its commit ran on the journal thread
            # committed rows it never offered (the journal's one thread runs that commit before this query)
            self._caught_up = False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._drain_once(client), drain_timeout)
            if final is not None:
                await self._publish(client, RawPublication.of(final()))
            reader.cancel()

    async def _read_commands(self, client: aiomqtt.Client) -> None:
        prefix = f"{self.root}/cmd/"
        async for message in client.messages:
            topic = message.topic.value
            if not topic.startswith(prefix):
                continue
            payload = message.payload if isinstance(message.payload, bytes) else str(message.payload).encode()
            try:
                await self.on_command(topic[len(prefix):], payload)
            except Exception:
                _LOGGER.exception("mqtt %s: command handler failed on %s", self.root, topic)

    async def _publish(self, client: aiomqtt.Client, pub: RawPublication) -> None:
        await client.publish(pub.topic, pub.payload, qos=pub.qos, retain=pub.retain)
        self.published += 1

    async def _drain_once(self, client: aiomqtt.Client) -> bool:
        """Publish every unacked row once, in order, merging QoS 0 messages by seq.

        Returns True when something was sent.
        """
        sent_any = False
        last = 0
        while True:
            if self._caught_up:
                rows = []
                floor = max(last, self._acked_upto)
                while self._fresh:
                    row = self._fresh.popleft()
                    if row.id > floor:
                        rows.append(row)
            else:
                rows = await self.journal.unacked(limit=50, after=last)
                if not rows:
                    # Everything committed so far is out; rows offered meanwhile are in _fresh
                    # (those also returned by a query are skipped by id above).
                    self._caught_up = True
                    continue
            if not rows:
                while self._volatile:
                    await self._publish(client, self._volatile.popleft()[1])
                    sent_any = True
                return sent_any
            acked: list[int] = []
            try:
                for row in rows:
                    # a clock tick rendered before this row (same session, lower seq) goes first
                    while self._volatile and self._volatile[0][0] < row.seq and row.session == self.session_of():
                        await self._publish(client, self._volatile.popleft()[1])
                    await self._publish_row(client, row)
                    acked.append(row.id)
                    last = row.id
                    self._acked_upto = row.id
                    self._published.set()
            finally:
                if acked:
                    await self.journal.ack(acked)
                    self.on_progress()
            sent_any = True

    def session_of(self) -> int:
        """The session of the QoS 0 messages (the current one)."""
        return self.session

    async def _publish_row(self, client: aiomqtt.Client, row: OutboxRow) -> None:
        await client.publish(row.topic, row.payload, qos=row.qos, retain=row.retain)
        self.published += 1

    async def _drain(self, client: aiomqtt.Client) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            await self._drain_once(client)
            if self._stop.is_set():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(self.config.keepalive / 2, 1.0))
            self.on_progress()


def _disable_nagle(client: aiomqtt.Client) -> None:
    """Set TCP_NODELAY on the client's socket.

    paho never does, so a QoS 1 publish that follows a small QoS 0 one (a clock reading) waits for
    the delayed ACK of the first, about 40 ms on Linux: measured by bench/bench_daemon.py (e2e part).
    """
    paho_client = getattr(client, "_client", None)
    sock = paho_client.socket() if paho_client is not None else None
    if sock is None:
        return
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (OSError, AttributeError) as exc:  # TLS-wrapped or non-TCP sockets may refuse; not fatal
        _LOGGER.debug("mqtt: could not set TCP_NODELAY: %s", exc)
