"""
A catalogue with every common field type: writers (addressed by slug), tags, volumes (owned,
some secret) and a plain numbered entry table for paging through many rows.
"""

import uuid
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.utils import timezone


class Writer(models.Model):
    """Somebody who writes volumes."""

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Tag(models.Model):
    name = models.CharField(max_length=50, unique=True)

    def __str__(self) -> str:
        return self.name


class Volume(models.Model):
    """A volume of the catalogue."""

    HARDBACK, PAPERBACK = "hb", "pb"
    FORMATS = [(HARDBACK, "Hardback"), (PAPERBACK, "Paperback")]

    title = models.CharField(max_length=200, db_index=True, help_text="The title on the cover.")
    writer = models.ForeignKey(Writer, related_name="volumes", on_delete=models.CASCADE)
    tags = models.ManyToManyField(Tag, blank=True)
    pages = models.PositiveIntegerField(default=100)
    price = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("9.99"))
    published = models.DateField(null=True, blank=True)
    added = models.DateTimeField(default=timezone.now)
    ref = models.UUIDField(default=uuid.uuid4, unique=True)
    extra = models.JSONField(default=dict, blank=True)
    in_print = models.BooleanField(default=True)
    format = models.CharField(max_length=2, choices=FORMATS, default=PAPERBACK)
    rating = models.FloatField(null=True, blank=True)
    reading_time = models.DurationField(null=True, blank=True)
    scan = models.FileField(upload_to="scans/", blank=True)
    cover = models.ImageField(upload_to="covers/", blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    #: Secret volumes are visible to their owner only (VolumeResource.get_queryset).
    secret = models.BooleanField(default=False)

    def __str__(self) -> str:
        return self.title


class Entry(models.Model):
    number = models.PositiveIntegerField()

    def __str__(self) -> str:
        return f"entry {self.number}"
