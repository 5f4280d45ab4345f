"""The engine (rules-spec §3–§4): :class:`Engine` is the façade, the rooms apply the Laws."""

from boardd.core.engine.facade import Engine

__all__ = ["Engine"]
