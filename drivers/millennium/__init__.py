"""Millennium ChessLink boards (protocols.md §4).

* :mod:`drivers.millennium.codec`: pure codec (parity, XOR checksum, status order as practised);
* :mod:`drivers.millennium.driver`: the asyncio driver (:class:`MillenniumDriver`);
* :mod:`drivers.millennium.emulator`: a byte-level board on a pty;
* :mod:`drivers.millennium.serial_driver`, :mod:`drivers.millennium.pty_emulator`: machinery shared
  with the other snapshot boards (Certabo).
"""

from drivers.millennium.driver import MillenniumDriver, MillenniumOptions, Options, create_driver

__all__ = ["MillenniumDriver", "MillenniumOptions", "Options", "create_driver"]
