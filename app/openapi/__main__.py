"""`python -m app.openapi` (`make spec`): writes openapi.yaml from the code."""

from __future__ import annotations

from .generator import SPEC_PATH, write

if __name__ == "__main__":
    changed = write()
    print(f"{SPEC_PATH.name}: {'written' if changed else 'up to date'} ({SPEC_PATH.stat().st_size} bytes)")
