"""The device side of an emulated serial port: a pseudo-terminal under a stable symlink, with hot-plug.

:class:`PtyPort` is the scaffolding the byte-level emulators share
(:class:`drivers.dgt.emulator.DgtEmulator` and
:class:`drivers.millennium.pty_emulator.PtyBoardEmulator` with its subclasses).
It opens a pty, publishes the slave side under :attr:`PtyPort.path` (like a
``/dev/serial/by-id/...`` link, so a real driver opens it with pyserial exactly
as it would open hardware), reads the host's bytes when the loop says they are
there, writes without blocking (the rest waits for the pty to be writable), and
closes the pty and removes the link on unplug; as an async context manager it
publishes the pty and runs the board's ``_scan_loop`` until exit. What the bytes
mean is the subclass's business: it implements :meth:`PtyPort._on_host_bytes`
and ``_scan_loop``, and may implement :meth:`PtyPort._on_plug`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import tty
from collections.abc import Coroutine
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Self

__all__ = ["PtyPort"]


class PtyPort:
    """Pty, symlink, non-blocking reads and writes of an emulated serial device.

    Args:
        directory: where the stable symlink is created (a temporary directory by default).
        link_name: file name of the symlink.
    """

    #: Prefix of the temporary directory made when no *directory* is given.
    _tmp_prefix: ClassVar[str] = "board-emu-"

    def __init__(self, *, directory: Path | None, link_name: str) -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._directory = directory
        self._link_name = link_name
        #: The device path (the symlink), set by :meth:`_publish_pty`.
        self.path = ""
        self._master: int | None = None
        self._slave: int | None = None
        self._out = bytearray()
        self._writer_registered = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        #: A stalled link (Bluetooth serial that hangs without failing): nothing read, nothing sent.
        self.hung = False

    # --- lifecycle ------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        self._loop = asyncio.get_running_loop()
        if self._directory is None:
            self._tmp = tempfile.TemporaryDirectory(prefix=self._tmp_prefix)
            self._directory = Path(self._tmp.name)
        self.path = str(self._directory / self._link_name)
        self._open_pty()
        self._task = asyncio.create_task(self._scan_loop(), name=f"{type(self).__name__} scans")
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._close_pty()
        if self._tmp is not None:
            self._tmp.cleanup()

    async def _scan_loop(self) -> None:
        """The board's sensor scans, run from entry to exit (subclasses)."""

    @property
    def plugged(self) -> bool:
        """The pty is open (the board is plugged in)."""
        return self._master is not None

    def _open_pty(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        link = Path(self.path)
        with contextlib.suppress(FileNotFoundError):
            link.unlink()
        link.symlink_to(os.ttyname(slave))
        assert self._loop is not None
        self._loop.add_reader(master, self._on_readable)
        self._on_plug()

    def _close_pty(self) -> None:
        if self._master is not None and self._loop is not None:
            self._loop.remove_reader(self._master)
            if self._writer_registered:
                self._loop.remove_writer(self._master)
                self._writer_registered = False
        for fd in (self._master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = None
        self._out.clear()
        with contextlib.suppress(FileNotFoundError):
            Path(self.path).unlink()

    def _on_plug(self) -> None:
        """The pty was (re)opened: the board was (re)powered (subclasses reset their state here)."""

    # --- bytes ------------------------------------------------------------------------------

    def _on_readable(self) -> None:
        assert self._master is not None
        try:
            data = os.read(self._master, 1024)
        except OSError:  # BlockingIOError, or EIO: nobody has the slave open yet
            return
        if data and not self.hung:
            self._on_host_bytes(data)

    def _on_host_bytes(self, data: bytes) -> None:
        """Bytes from the host (subclasses)."""

    def _send_raw(self, data: bytes) -> None:
        """Queue *data* for the host and write what the pty takes now (no checks, no hooks)."""
        self._out += data
        self._flush()

    def _flush(self) -> None:
        master = self._master
        if master is None or self._loop is None:
            return
        while self._out:
            try:
                written = os.write(master, self._out)
            except BlockingIOError:
                break
            except OSError:
                self._out.clear()
                break
            del self._out[:written]
        if self._out and not self._writer_registered:
            self._loop.add_writer(master, self._flush)
            self._writer_registered = True
        elif not self._out and self._writer_registered:
            self._loop.remove_writer(master)
            self._writer_registered = False


async def play_until_stopped(play: Coroutine[Any, Any, None], stop: asyncio.Event) -> None:
    """Run an emulator's *play* until it ends or *stop* is set (a signal, stdin closing), then cancel both.

    The emulators' command lines stop cleanly at any point this way, during a game too.
    """
    player = asyncio.ensure_future(play)
    waiter = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({player, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (player, waiter):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
