"""The catalogue in the Django admin: the live tests save volumes here and expect MCP notifications."""

from django.contrib import admin

from .models import Volume


@admin.register(Volume)
class VolumeAdmin(admin.ModelAdmin):
    fields = ["title", "pages", "secret", "owner"]
    search_fields = ["title"]
