"""MQTT consumers of the hall: the live-transmission relay and the web views
(broadcast screens and arbiter tablets). They read the published contract only and do
not import the daemon's internals (``boardd.daemon.sdnotify`` is the one shared helper).
"""
