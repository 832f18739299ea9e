"""A headless stand-in for the person at the browser, for the OAuth scenarios:

    python -m mcpwire_adapters.testing.client_probe.browser URL

It GETs ``URL`` (the hostile authorization server's authorization endpoint, which approves at
once) and follows its redirects, on loopback addresses only, so that the authorization code
reaches the client's redirect URI as it would from a browser. The probe names it in the
``BROWSER`` variable of the client's environment (Python's ``webbrowser``, ``xdg-open`` and
many other launchers read it). Exit 0 when the last page answered 2xx, 1 otherwise.
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Final
from urllib.parse import urljoin, urlsplit

from ..rawwire import is_loopback_host

__all__ = ["MAX_REDIRECTS", "main"]

MAX_REDIRECTS: Final = 5
TIMEOUT: Final = 10.0


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        sys.stderr.write("usage: python -m mcpwire_adapters.testing.client_probe.browser URL\n")
        return 2
    url = args[0]
    opener = urllib.request.build_opener(_NoRedirects)
    for _ in range(MAX_REDIRECTS + 1):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not is_loopback_host(parts.hostname or ""):
            sys.stderr.write(f"browser: not following {url[:200]!r} (loopback http(s) only)\n")
            return 1
        try:
            with opener.open(url, timeout=TIMEOUT) as page:
                page.read(64 * 1024)
                return 0 if 200 <= page.status < 300 else 1
        except urllib.error.HTTPError as answer:
            location = answer.headers.get("location")
            answer.close()
            if answer.code not in (301, 302, 303, 307, 308) or not location:
                return 1
            url = urljoin(url, location)
        except OSError as exc:
            sys.stderr.write(f"browser: {url[:200]!r}: {exc}\n")
            return 1
    return 1


if __name__ == "__main__":
    sys.exit(main())
