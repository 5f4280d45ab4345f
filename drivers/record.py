"""``boardd record``: record a board's raw traffic to a capture file (:mod:`drivers.capture`).

Every hardware family's ``create_driver`` accepts ``tap=`` and can be recorded (DGT, Millennium and
Certabo tap their serial link; Chessnut its USB HID or BLE link, a report per line; the DGT 3000 its
I²C packets). The driver runs as it does
in the daemon (start-up sequence, keep-alives, dumps,
reconnection), with a tap on the transport writing every chunk received and sent
as a JSON Lines capture, plus a line for every change of the link the driver opens
itself (:func:`drivers.capture.transport_link`: the board's, or for the DGT 3000 on
I²C the clock's; a DGT clock on the board's jack is told by the board's messages and
replays from them). Recording stops on
SIGINT/SIGTERM or after ``--duration`` seconds. The capture replays with
``boardd replay --driver <family> FILE``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import logging
import signal
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from boardd.core.errors import BoarddError
from boardd.core.events import LinkChanged
from drivers.base import BoardDriver, DriverKind, family_module, options_from_mapping
from drivers.capture import CaptureWriter, transport_link

__all__ = ["configure_parser", "record", "run"]

_LOGGER = logging.getLogger(__name__)


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``boardd record``."""
    parser.add_argument("--driver", choices=[k.value for k in DriverKind if k is not DriverKind.SIM], default="dgt",
                        help="device family (default: dgt); its driver must support a traffic tap")
    parser.add_argument("--port", required=True,
                        help="device path or URL: /dev/ttyACM0, /dev/serial/by-id/..., socket://host:port")
    parser.add_argument("-o", "--output", required=True, help="capture file to write (JSON Lines); - for stdout")
    parser.add_argument("--duration", type=float, default=None, help="stop after this many seconds")


def _recording_driver(kind: str, port: str, writer: CaptureWriter) -> BoardDriver:
    """The family's driver with a tap: its ``create_driver`` must accept ``tap=``."""
    options = options_from_mapping(kind, {"port": port})
    factory = getattr(family_module(kind), "create_driver", None)
    if factory is None or "tap" not in inspect.signature(factory).parameters:
        raise BoarddError(f"recording is not supported for driver {kind!r} (its create_driver takes no tap)")
    driver: BoardDriver = factory(options, time_source=time.monotonic, tap=writer)
    return driver


async def record(port: str, stream: IO[str], *, driver: str = "dgt", duration: float | None = None,
                 stop: asyncio.Event | None = None) -> dict[str, int]:
    """Record *port* to *stream* until *stop* is set or *duration* has passed; returns counters.

    Raises:
        BoarddError: the family cannot be recorded, or its options refuse the port.
        DriverError: the port can never be opened.
    """
    writer = CaptureWriter(stream, family=driver, port=port, time_source=time.monotonic)
    board = _recording_driver(driver, port, writer)
    stop = stop or asyncio.Event()
    counts = {"events": 0}
    link = transport_link(driver)

    async def consume() -> None:
        async for event in board.events():
            counts["events"] += 1
            if isinstance(event, LinkChanged) and event.link is link:
                writer.link(event.up)
                _LOGGER.info("%s link %s: %s", link.value, "up" if event.up else "down", event.detail)
            else:
                _LOGGER.debug("%r", event)
            writer.flush()

    async with board:
        consumer = asyncio.create_task(consume(), name="record consumer")
        waiter = asyncio.create_task(stop.wait(), name="record stop")
        done, _ = await asyncio.wait({consumer, waiter}, timeout=duration, return_when=asyncio.FIRST_COMPLETED)
        for task in (consumer, waiter):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        error = consumer.exception() if consumer in done else None
        if error is not None:
            raise error
        counters: Mapping[str, int] = getattr(board, "counters", {})
    writer.flush()
    return {"rx_bytes": writer.counts["rx"], "tx_bytes": writer.counts["tx"], "events": counts["events"],
            "discarded_bytes": counters.get("discarded_bytes", 0), "disconnects": counters.get("disconnects", 0)}


def run(args: argparse.Namespace) -> int:
    """``boardd record``: 0 when recorded until stopped, 2 on a usage or driver error."""
    output: IO[str]
    try:
        output = sys.stdout if args.output == "-" else Path(args.output).open("w", encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        print(f"boardd record: {exc}", file=sys.stderr)
        return 2

    async def main() -> dict[str, int]:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        return await record(args.port, output, driver=args.driver, duration=args.duration, stop=stop)

    try:
        counts = asyncio.run(main())
    except BoarddError as exc:
        print(f"boardd record: {exc}", file=sys.stderr)
        return 2
    finally:
        if output is not sys.stdout:
            output.close()
    print("recorded " + ", ".join(f"{k}={v}" for k, v in counts.items()), file=sys.stderr)
    return 0
