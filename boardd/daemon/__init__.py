"""The board daemon's I/O: the run loop (``service``), its configuration, the journal,
the MQTT link, arbiter commands, sd_notify, the demo and the offline replay.

One task group in ``service.serve`` owns all I/O; the rules are judged by
``boardd.core`` alone.
"""
