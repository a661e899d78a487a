"""For tests: approve CRON/HOOK headings the way the person does, by sealing their hashes.

``approve_jobs(state_dir, memex)`` seals an approval of every heading found under the
memex as it is now (what ``passepartout cron allow all`` does); ``approve_text(state_dir,
memex, path, text)`` seals those of ``text`` as the file ``path`` will hold it, so a
test can approve a heading before it writes the file the running agent will scan.
A heading under a preset is approved with the presets the daemon reads (``presets``,
from the file the test gave it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from passepartout.events.approval import JobApprovals, job_hash
from passepartout.events.jobs import OrgNode
from passepartout.events.presets import Preset
from passepartout.events.scan import org_files, scan_file, scan_text


def _seal(state_dir: Path | str, memex: Path | str, nodes: list[OrgNode],
          presets: Mapping[str, Preset] | None = None) -> list[str]:
    approvals = JobApprovals.in_state(Path(state_dir))
    for node in nodes:
        approvals.record(job_hash(node, Path(memex), presets), node, Path(memex),
                         allowed=True)
    return [node.id for node in nodes]


def approve_jobs(state_dir: Path | str, memex: Path | str,
                 *places: Path | str) -> list[str]:
    """Approve every heading in the org files under ``places`` (the memex without);
    the ids approved."""
    nodes = [n for path in org_files(places or (memex,)) for n in scan_file(path).nodes]
    return _seal(state_dir, memex, nodes)


def approve_text(state_dir: Path | str, memex: Path | str, path: Path | str,
                 text: str, presets: Mapping[str, Preset] | None = None) -> list[str]:
    """Approve the headings of ``text`` as the file ``path`` will hold them."""
    return _seal(state_dir, memex, scan_text(text, str(Path(path).resolve())).nodes,
                 presets)
