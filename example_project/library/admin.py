from django.contrib import admin, messages

from django_mcp.admin_actions import McpActionsMixin

from .models import Author, Book


admin.site.register(Author)


@admin.register(Book)
class BookAdmin(McpActionsMixin, admin.ModelAdmin):
    """The catalogue in the admin; its "put back on the shelf" action is also an MCP tool (mcp.py)."""

    list_display = ("title", "author", "published", "available")
    list_filter = ("available", "published")
    search_fields = ("title", "author__name")
    actions = ["put_back_on_shelf"]
    # Published as the tool book_put_back_on_shelf, for staff with library.change_book.
    mcp_actions = ["put_back_on_shelf"]

    @admin.action(permissions=["change"], description="Put the selected books back on the shelf")
    def put_back_on_shelf(self, request, queryset):
        count = queryset.filter(available=False).update(available=True)
        self.message_user(request, f"{count} book(s) put back on the shelf.", messages.SUCCESS)
