"""The turn bench's clock stops when the reply's whole text is in the buffer.

bench/emacs_onscreen.el's ``passepartout-bench-watch`` is what both clients of
bench/emacs_bridge.py are timed to: it must fire in the change that completes the
reply, not at a piece of it, not at text that was there before, and not again.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from wire_client import ROOT

EMACS = shutil.which("emacs")
pytestmark = pytest.mark.skipif(EMACS is None, reason="emacs is not installed")

# Each step marks when the watch fired (nil or the step's name), then checks that the
# fired time lies between the stamps taken around the completing insertion.
SCRIPT = r"""
(load (expand-file-name "bench/emacs_onscreen" (getenv "BENCH_ROOT")) nil t)
(with-temp-buffer
  (insert "An earlier reply: Hello there, friend.\n")
  (let ((watch (passepartout-bench-watch (current-buffer) "Hello there, friend."))
        before after)
    (princ (format "old-text %S\n" (car watch)))
    (goto-char (point-max))
    (insert "* Reply\nHello ")
    (princ (format "piece %S\n" (car watch)))
    (insert "there, FRIEND.")
    (princ (format "other-case %S\n" (car watch)))
    (insert "\nHello there,")
    (setq before (float-time))
    (insert " friend.")
    (setq after (float-time))
    (princ (format "complete %S\n" (and (car watch) (<= before (car watch) after))))
    (let ((fired (car watch)))
      (insert "\nHello there, friend.")
      (princ (format "once %S\n" (eq fired (car watch))))
      (princ (format "hook-gone %S\n" (length (remq t after-change-functions)))))))
(with-temp-buffer
  (let ((watch (passepartout-bench-watch (current-buffer) "done")))
    (passepartout-bench-unwatch watch)
    (insert "done")
    (princ (format "unwatched %S\n" (car watch)))))
"""


def test_the_watch_fires_in_the_change_that_completes_the_reply() -> None:
    assert EMACS is not None
    result = subprocess.run([EMACS, "-Q", "--batch", "--eval", f"(progn {SCRIPT})"],
                            env={"BENCH_ROOT": str(ROOT), "HOME": "/nonexistent",
                                 "PATH": "/usr/bin:/bin"},
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines == {
        "old-text": "nil",         # the same text before the watch began does not count
        "piece": "nil",            # half a reply is not the reply
        "other-case": "nil",       # nor is other text
        "complete": "t",           # the change that completes it stamps its own time
        "once": "t",               # and later changes do not move that time
        "hook-gone": "0",          # the watch removed itself
        "unwatched": "nil",        # an unwatched buffer is not timed
    }
