"""The fake model of tests/fakellm.py, re-scriptable while it runs, for the ERT suite.

    python elisp/test/fakellm_control.py

prints the base URL on the first line of stdout, then reads JSON lines on stdin:
each is a list of replies in fakellm's script format; the replies still queued
are dropped, the new ones queued, and ``ok`` is printed.  The line
``"last-request"`` prints the body of the last request the model received.  One server process
then serves many ERT tests, each with its own script.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

from fakellm import FakeLLM


def main() -> int:
    with FakeLLM(default="error") as fake:
        print(fake.base_url, flush=True)
        for line in sys.stdin:
            try:
                items = json.loads(line)
                if items == "last-request":  # the body of the last request, one JSON line
                    body = fake.last_request.body if fake.request_count else None
                    print(json.dumps(body), flush=True)
                    continue
                while fake.pop() is not None:
                    pass
                fake.load_script(items)
            except (ValueError, KeyError, TypeError) as err:
                print(f"error {err}", flush=True)
                continue
            print("ok", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
