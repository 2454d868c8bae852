"""Reading a Bearer challenge (RFC 6750 section 3; RFC 9110 section 11.2 for the syntax)."""

from django_mcp.doctor.http import origin_of, same_resource
from django_mcp.doctor.visit import challenge_params


def test_challenge_params() -> None:
    header = ('Bearer error="invalid_token", error_description="The \\"token\\" expired", '
              'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope=mcp')
    assert challenge_params(header) == {
        "error": "invalid_token", "error_description": 'The "token" expired', "scope": "mcp",
        "resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"}
    assert challenge_params('Basic realm="x"') == {}


def test_resources_compare_as_clients_compare_them() -> None:
    assert origin_of("HTTPS://MCP.Example.com:443/mcp") == "https://mcp.example.com"
    assert origin_of("http://[::1]:8000/mcp") == "http://[::1]:8000"
    assert same_resource("https://MCP.example.com/mcp/", "https://mcp.example.com/mcp")
    assert not same_resource("https://mcp.example.com/mcp", "https://mcp.example.com")
