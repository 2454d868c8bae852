"""The noisy app's configuration: ``ready()`` prints and logs, like apps that announce themselves."""

from django.apps import AppConfig

from . import noise


class StdioNoisyConfig(AppConfig):
    """Writes to stdout when Django calls ``ready()``."""

    name = "tests.stdio_noisy"
    label = "stdio_noisy"

    def ready(self) -> None:
        print(noise.READY_PRINT)
        noise.logger.info(noise.READY_LOG)
