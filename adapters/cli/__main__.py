from __future__ import annotations

import sys

from .commands import main

sys.exit(main())
