"""``boardd web``: the broadcast screen and the arbiter tablet (aiohttp, MQTT bridge).

:mod:`boardd.consumers.web.app` is the service and the CLI; :mod:`boardd.consumers.web.hub` the pure model of the
hall and what each audience may see; :mod:`boardd.consumers.web.auth` the arbiter login.
"""
