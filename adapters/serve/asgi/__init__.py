"""Streamable HTTP as an ASGI 3 application: ``app`` (scope, receive and send to the engine and the
App) and ``on_asyncio`` (every place the driver steps a coroutine by hand or waits on asyncio
without anyio, fenced in one module)."""
