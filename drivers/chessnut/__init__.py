"""Chessnut boards (Air, Air+, Go, Pro, Move) over USB HID (protocols.md §6).

* :mod:`drivers.chessnut.codec`: pure codec (board frames, battery, commands, LEDs);
* :mod:`drivers.chessnut.usb_link`: blocking pyusb access (claim, read, write, hot-plug errors);
* :mod:`drivers.chessnut.driver`: the asyncio driver (:class:`ChessnutDriver`);
* :mod:`drivers.chessnut.emulator`: a pyusb test backend standing in for the USB board.
"""

from drivers.chessnut.driver import ChessnutDriver, ChessnutOptions, Options, create_driver

__all__ = ["ChessnutDriver", "ChessnutOptions", "Options", "create_driver"]
