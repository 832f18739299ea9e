"""mcpwire's way: the server of ``examples/sdk_compare_mcpserver.py`` on an ``App``.

    pip install 'mcpwire[trio]'
    mcpwire serve examples/sdk_compare_mcpwire.py   # Streamable HTTP at http://127.0.0.1:8000/mcp

The same tools, resource and prompt, listed with the same schemas; where the two servers still
differ is in ``docs/server.md`` ("Next to the official SDK's MCPServer"). ``mcpwire serve`` runs
the ``app`` of a file, so the file needs no ``__main__`` block (to run it as a program instead:
``trio.run(serve_http, app, "127.0.0.1", 8000)``). ``tests/interop/test_sdk_compare.py`` serves
both files and holds them equal through the SDK's own client.
"""

import msgspec

from mcpwire_adapters import App, Context

app = App("Demo", "1.0")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@app.tool()
async def countdown(start: int, ctx: Context, label: str = "liftoff") -> str:
    """Count down from start, reporting progress."""
    for step in range(1, start + 1):
        await ctx.progress(step, total=start, message=f"{start - step} to go")
    return f"{label}!"


class Forecast(msgspec.Struct):
    city: str
    celsius: float
    summary: str


@app.tool()
def forecast(city: str) -> Forecast:
    """Tomorrow's weather in a city."""
    return Forecast(city=city, celsius=21.5, summary="sunny")


@app.resource("config://settings", mime_type="application/json")
def settings() -> str:
    """The application's settings."""
    return '{"theme": "dark", "language": "en"}'


@app.prompt()
def review_code(code: str, language: str = "Python") -> str:
    """Ask for a code review."""
    return f"Please review this {language} code:\n\n{code}"
