"""The catalogue in the Django admin: the live tests save volumes here and expect MCP notifications."""

from django.contrib import admin

from .models import Volume


@admin.register(Volume)
class VolumeAdmin(admin.ModelAdmin):
    fields = ["title", "pages", "secret", "owner"]
    search_fields = ["title"]

    def get_queryset(self, request):
        # Row rules written once, for the admin; a ModelResource with use_admin=True follows them.
        volumes = super().get_queryset(request)
        return volumes if request.user.is_superuser else volumes.filter(secret=False)
