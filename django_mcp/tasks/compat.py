"""
Django's task framework, wherever it comes from: ``django.tasks`` (Django 6.0 and later) or the
``django-tasks`` backport for Django 5.2; both have the same API. None when neither is installed.
"""

from typing import Any

try:  # Django >= 6.0
    from django.tasks import default_task_backend, task, task_backends  # type: ignore[import-not-found]
    from django.tasks.backends.dummy import DummyBackend  # type: ignore[import-not-found]
    from django.tasks.backends.immediate import ImmediateBackend  # type: ignore[import-not-found]
except ImportError:  # Django 5.2 with the backport, or nothing
    try:
        from django_tasks import default_task_backend, task, task_backends  # type: ignore[import-not-found,no-redef]
        from django_tasks.backends.dummy import DummyBackend  # type: ignore[import-not-found,no-redef]
        from django_tasks.backends.immediate import ImmediateBackend  # type: ignore[import-not-found,no-redef]
    except ImportError:
        default_task_backend = task = task_backends = None  # type: ignore[assignment]
        DummyBackend = ImmediateBackend = None  # type: ignore[assignment,misc]

AVAILABLE = task is not None


def backend(alias: str) -> Any:
    """The task framework's backend called ``alias``."""
    assert task_backends is not None
    return task_backends[alias]


def runs_elsewhere(alias: str) -> bool:
    """
    Whether ``alias`` hands work to another process that can run it later (the database backend,
    RQ, Celery…): not the immediate backend, which runs a task inline and waits for it, and not
    the dummy one, which never runs it.
    """
    found = backend(alias)
    return not isinstance(found, tuple(kind for kind in (ImmediateBackend, DummyBackend) if kind is not None))


def queues_in_database_of(alias: str, model: Any) -> bool:
    """
    Whether ``alias`` keeps its queue as rows of the database ``model`` is written to
    (django-tasks-db's database backend, on one database): work queued inside a transaction there
    is seen by no worker before the transaction commits.
    """
    try:
        from django_tasks_db import DatabaseBackend  # type: ignore[import-not-found]
        from django_tasks_db.models import DBTaskResult  # type: ignore[import-not-found]
    except ImportError:
        return False
    from django.db import router

    return isinstance(backend(alias), DatabaseBackend) and (
        router.db_for_write(DBTaskResult) == router.db_for_write(model))
