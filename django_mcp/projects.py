"""Where the project lives on disk, for what points a client or a file at it."""

import os
import sys
from pathlib import Path


def project_dir() -> Path:
    """
    The directory to put on ``PYTHONPATH`` so the settings import from anywhere (a host starts the
    server from its own working directory), where ``manage.py`` usually is: the one holding the
    settings' top-level package.
    """
    top = sys.modules.get(os.environ.get("DJANGO_SETTINGS_MODULE", "").partition(".")[0])
    location = getattr(top, "__file__", None)
    if location:
        path = Path(location).resolve()
        return path.parent.parent if path.name == "__init__.py" else path.parent
    script = Path(sys.argv[0]).resolve()
    return script.parent if script.name == "manage.py" else Path.cwd()
