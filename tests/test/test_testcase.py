"""
McpTestCase on Django's own TestCase: each test in a transaction rolled back after it, the rows it
makes served to its client by sync code (tools, resources) on the test's connection; async test
methods too.
"""

from django.test import TestCase, TransactionTestCase

from django_mcp.test import McpClient, McpTestCase
from tests.catalogue.models import Writer
from tests.test import shelf


class ShelfTests(McpTestCase, TestCase):
    """Runs twice (legacy session and stateless): see the subclass below."""

    mcp_protocol_version = "2026-07-28"

    @classmethod
    def setUpTestData(cls):
        Writer.objects.create(name="Ursula", slug="ursula")

    def make_mcp_client(self) -> McpClient:
        return McpClient(self.mcp_protocol_version, app=shelf.application())

    def test_rows_made_in_the_test_are_what_the_tool_counts(self):
        Writer.objects.create(name="Octavia", slug="octavia")
        self.assertEqual(self.mcp_client.call_tool("count_writers").structured, {"writers": 2})

    def test_the_previous_tests_rows_were_rolled_back(self):
        # Same slug as the other test: only a rolled-back transaction lets both pass, in any order.
        Writer.objects.create(name="Octavia", slug="octavia")
        result = self.mcp_client.call_tool("count_writers")
        self.assertEqual(self.assertStructuredValid("count_writers", result), {"writers": 2})

    def test_permissions_as_assertions(self):
        self.assertToolHidden("members_only")
        self.assertCallRefused("members_only", code=-32602)
        user = self._user("ada")
        self.mcp_client.force_authenticate(user)
        self.assertToolListed("members_only")
        self.assertEqual(self.mcp_client.call_tool("members_only").text, "welcome")

    def test_a_sync_resource_read_sees_the_tests_rows(self):
        # A project's ASGI application serving the catalogue site: its writer rows are read by
        # sync code on the test's connection.
        client = McpClient(self.mcp_protocol_version, site="tests.catalogue.sites.site")
        Writer.objects.create(name="Octavia", slug="octavia")
        self.assertIn("catalogue://writer/octavia", client.list_resources().uris)
        self.assertIn("Octavia", client.read_resource("catalogue://writer/octavia").text)

    async def test_an_async_test_method_uses_the_a_methods(self):
        await Writer.objects.acreate(name="Octavia", slug="octavia")
        result = await self.mcp_client.acall_tool("count_writers")
        self.assertEqual(result.structured, {"writers": 2})

    def test_progress_and_notifications(self):
        result = McpClient(self.mcp_protocol_version).call_tool("slow_steps", steps=2, delay=0)
        self.assertNotified(result, "notifications/progress", progress=1)

    @staticmethod
    def _user(name):
        from django.contrib.auth import get_user_model

        return get_user_model().objects.create_user(name)


class LegacyShelfTests(ShelfTests):
    """The same tests through a 2025-11-25 session (its row written on the test's connection)."""

    mcp_protocol_version = "2025-11-25"


class NotificationTests(McpTestCase, TransactionTestCase):
    """A saved row notifies its subscribers when its transaction commits: a TransactionTestCase, as the how-to says."""

    def make_mcp_client(self) -> McpClient:
        from tests.catalogue.sites import site

        return McpClient(site=site)

    async def test_saving_a_row_notifies_the_client_listening_for_it(self):
        writer = await Writer.objects.acreate(name="Ursula", slug="ursula")
        async with self.mcp_client.listen(uris=["catalogue://writer/ursula"]) as stream:
            writer.name = "Ursula K. Le Guin"
            await writer.asave()
            update = await stream.next("notifications/resources/updated")
        self.assertEqual(update["params"]["uri"], "catalogue://writer/ursula")
        self.assertNotified(stream, "notifications/resources/updated", uri="catalogue://writer/ursula")
