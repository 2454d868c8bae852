"""
tests.stdio_noisy_settings, noisier still: this module prints when imported, and an app listed
before django_mcp prints when Django imports it. Only ``python -m django_mcp.stdio`` redirects
early enough for these (docs/stdio.md).
"""

from tests.stdio_noisy import noise
from tests.stdio_noisy_settings import *  # noqa: F401,F403
from tests.stdio_noisy_settings import INSTALLED_APPS

print(noise.SETTINGS_PRINT)

INSTALLED_APPS = ["tests.stdio_noisy_early", *INSTALLED_APPS]
