"""The official Python SDK's way: a small server on ``MCPServer`` (``mcp`` 2.3.0; FastMCP before).

    pip install mcp
    python examples/sdk_compare_mcpserver.py        # Streamable HTTP at http://127.0.0.1:8000/mcp

Written as the SDK's own examples write a server: a typed tool, a tool that reports progress, a
tool with structured output, a resource and a prompt. ``examples/sdk_compare_mcpwire.py`` is the
same server on mcpwire's ``App``; ``tests/interop/test_sdk_compare.py`` serves both and holds them
equal through the SDK's own client.
"""

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

mcp = MCPServer("Demo", version="1.0")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.tool()
async def countdown(start: int, ctx: Context, label: str = "liftoff") -> str:
    """Count down from start, reporting progress."""
    for step in range(1, start + 1):
        await ctx.report_progress(step, start, f"{start - step} to go")
    return f"{label}!"


class Forecast(BaseModel):
    city: str
    celsius: float
    summary: str


@mcp.tool()
def forecast(city: str) -> Forecast:
    """Tomorrow's weather in a city."""
    return Forecast(city=city, celsius=21.5, summary="sunny")


@mcp.resource("config://settings", mime_type="application/json")
def settings() -> str:
    """The application's settings."""
    return '{"theme": "dark", "language": "en"}'


@mcp.prompt()
def review_code(code: str, language: str = "Python") -> str:
    """Ask for a code review."""
    return f"Please review this {language} code:\n\n{code}"


if __name__ == "__main__":
    mcp.run(transport="streamable-http")
