"""The server engine (light: the standard library's HTTP): judge with a running inference server.

`judge` (`ServerJudge`, one server or several), `dialects` (each server kind's request and
reply), `discovery` (what a server shows at start: kind, model, grammar setup), `client` (HTTP
with timeouts and bounded retries).
"""

from localjudge.engines.server.client import ServerError
from localjudge.engines.server.dialects import KINDS
from localjudge.engines.server.judge import ServerJudge

__all__ = ["KINDS", "ServerError", "ServerJudge"]
