"""
``scripts/fleet``: the deployment of docs/howto/deployment.md, started on one machine.

N ASGI workers (daphne, or uvicorn) serve the example project (``example_project.settings_fleet``:
``DEBUG`` off, PostgreSQL, ``channels_redis``) behind nginx, which runs ``deploy/nginx.conf``, the
guide's own file, rendered by simple substitution. The steps, each in its module:

- ``services``: PostgreSQL and Redis, used when running, started when absent and the system
  allows; the fleet's database created;
- ``project``: the environment every Django process gets, and what runs once before the workers
  (``migrate``, ``collectstatic``, the demo data);
- ``nginx``: finding (or installing) nginx, rendering the configuration into the run folder;
- ``processes``: the child processes, their readiness, and stopping them;
- ``__main__``: the command line, the banner, waiting for Ctrl-C, ``stop``.

Everything the fleet writes at run time (the rendered configuration, logs, pid files, static
files) goes to its run folder, under the system's temporary folder unless ``--run-dir`` names one,
never into the checkout. tests/deployment/test_fleet.py runs ``scripts/fleet`` itself.
"""
