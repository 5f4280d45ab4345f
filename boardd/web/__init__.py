"""``boardd web``: the broadcast screen and the arbiter tablet (aiohttp, MQTT bridge).

:mod:`boardd.web.app` is the service and the CLI; :mod:`boardd.web.hub` the pure model of the
hall and what each audience may see; :mod:`boardd.web.auth` the arbiter login.
"""
