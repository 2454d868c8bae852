"""
tests.settings plus an app that writes to stdout (tests/stdio_noisy) and LOGGING with a handler on
``sys.stdout`` — the project a careless stdio server would corrupt (tests/transports/test_stdio_noise.py).
"""

from tests.settings import *  # noqa: F401,F403
from tests.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.stdio_noisy"]

# Configured before the apps are populated: the handler binds the sys.stdout object of that moment,
# which keeps writing to file descriptor 1 whatever sys.stdout is rebound to later.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stdout": {"class": "logging.StreamHandler", "stream": "ext://sys.stdout"}},
    "root": {"handlers": ["stdout"], "level": "INFO"},
    "loggers": {"tests.stdio_noisy": {"level": "INFO"}},
}
