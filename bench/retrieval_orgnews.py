# ruff: noqa: E501  (one query a line reads best)
"""The held-out retrieval half: real org text, questions written before any tuning.

The memex is Org's own ORG-NEWS (bench/org-news.org, copied from Emacs 28.2's
etc/ORG-NEWS, GPL-3.0-or-later like this project): one 235 KB file of 925
headings up to five levels deep, the same titles ("New features", "Miscellaneous")
under every version, nodes from a line to 4 KB long. The questions below target
the sections of Org 8.3 and older; they were written from those sections alone,
before search was changed, and no change to search may be tuned on them (the
sections of Org 9.x are the tuning half's, ``TUNING``, written afterwards).

A target is named by its version (the top heading) and a piece of its own title,
which must be the whole title of one heading of that version or a piece of exactly
one (``resolve`` checks).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from passepartout.memory import MemoryNode, MemoryStore
from passepartout.memory.orgimport import FILE_PREFIX

ORG_NEWS = Path(__file__).resolve().parent / "org-news.org"

Target = tuple[str, str]  # (version heading, piece of the target's title)

# (query, kind, targets)
HELDOUT: list[tuple[str, str, tuple[Target, ...]]] = [
    ("BTEST_RE select tests", "word", (("Version 8.3", "Select tests to perform with the build system"),)),
    ("org-timer-default-timer", "word", (("Version 8.3", "org-timer-default-timer~ type changed"),)),
    ("polyglossia", "word", (("Version 8.3", "Support for the ~polyglossia~"),)),
    ("ob-processing", "word", (("Version 8.3", "Babel: support for Processing language"),)),
    ("untilnow clock table", "word", (("Version 8.3", "New time block for clock tables"),)),
    ("ox-groff", "word", (("Version 8.0.1", "~ox-groff.el~"),)),
    ("poporg outorg", "word", (("Version 8.0.1", "~poporg.el~ and ~outorg.el~"),)),
    ("clocksum effort durations", "word", (("Version 8.0.1", "org-time-clocksum-use-effort-durations"),)),
    ("MobileOrg iOS Dropbox", "word", (("Version 8.0.1", "MobileOrg for iOS"),)),
    ("org-clock-continuously", "word", (("Version 7.9.2", "org-clock-cont"),)),
    ("CLOCKSUM_T", "word", (("Version 7.9.2", "New special property =CLOCKSUM"),)),
    ("Konrad Hinsen eshell", "word", (("Version 7.9.2", "=org-eshell.el="),)),
    ("ELPA repository package-archives", "word", (("Version 7.9.2", "New ELPA repository"),)),
    ("org-mac-link-grabber", "word", (("Version 8.2", "Combine org-mac-message.el"),)),
    ("Julia code blocks", "word", (("Version 8.0.1", "~ob-julia.el~"),)),
    ("my drawer of properties must now sit right under the heading", "meaning", (("Version 8.3", "Properties drawers syntax changes"),)),
    ("tags nested inside other tags", "meaning", (("Version 8.3", "Hierarchies of tags"),)),
    ("hide a scheduled task in the agenda until a few days later", "meaning", (("Version 8.0.1", "Implement \"delay\" cookies"),)),
    ("show at most a handful of items in the agenda", "meaning", (("Version 8.0.1", "New options to limit the number of agenda entries"),)),
    ("the rewritten exporter of version eight", "meaning", (("Version 8.0.1", "New export engine"),)),
    ("turn an Org file into a manual page", "meaning", (("Version 8.0.1", "~ox-man.el~"),)),
    ("an agenda covering two weeks", "meaning", (("Version 8.2", "New agenda fortnight view"),)),
    ("keep the agenda buffer around in the background so it opens quickly", "meaning", (("Version 7.9.2", "org-agenda-st"),)),
    ("repeat a task every hour", "meaning", (("Version 7.9.2", "Support for hour"),)),
    ("the new way to take quick notes that replaced remember", "meaning", (("Version 7.8.11", "org-capture.el is now the default capture system"),)),
    ("run a block's output through another block afterwards", "meaning", (("Version 8.0.1", "=:post= header argument"),)),
    ("save my agenda to a file of its own", "meaning", (("Version 8.0.1", "Allow writing an agenda to an =.org= file"),)),
    ("slide presentations in the browser", "meaning", (("Version 8.0.1", "~ox-deck.el~ and ~ox-s5.el~"),)),
    ("a feed of blog posts from org pages", "meaning", (("Version 8.0.1", "~ox-rss.el~"),)),
    ("sections that should not get a number when exported", "meaning", (("Version 8.3", "Export unnumbered headlines"),)),
    ("how do I install or update Org", "mixed", (("Version 8.0.1", "Installation"),)),
    ("the manual is no longer under the GPL", "mixed", (("Version 7.9.3", "No GPL manual anymore"),)),
    ("mark the element under the cursor", "mixed", (("Version 7.9.2", "org-mark-element"),)),
    ("empty table fields in Calc formulas", "mixed", (("Version 8.0.1", "You now use \"nan\" for empty fields"),)),
    ("reset every agenda filter at once", "mixed", (("Version 8.0.1", "=|= in agenda view resets all filters"),)),
    ("filter the agenda by category", "mixed", (("Version 7.9.2", "Allow category filtering in the"),)),
    ("the sh babel library has a new name", "mixed", (("Version 8.2", "=ob-sh.el= renamed to =ob-shell="),)),
    ("emacs lisp blocks evaluated with lexical scope", "mixed", (("Version 8.3", "Default lexical evaluation"),)),
    ("how LaTeX classes for export are meant to be used now", "mixed", (("Version 7.8.11", "Changes to the intended use of =org-export-latex-classes="),)),
    ("improved handling of plain lists", "mixed", (("Version 7.8.11", "Improved handling of lists"),)),
    ("table of the new key bindings", "mixed", (("Version 7.9.2", "Overview of the new keybindings"),)),
    ("Confluence wiki markup export", "mixed", (("Version 8.0.1", "~ox-confluence.el~"),)),
    ("heading search in file links ignores spaces and cookies", "mixed", (("Version 8.3", "Exact heading search for external links"),)),
    ("countdown timers", "mixed", (("Version 8.3", "Countdown timers can now be paused"), ("Version 8.3", "Countdown timer support hh:mm:ss format"))),
    ("group tags", "mixed", (("Version 8.0.1", "Tag groups"), ("Version 8.3", "Additional syntax for non-unique grouptags"))),
]


# The tuning half, on the sections of Org 9.x: search may be tuned on these.
TUNING: list[tuple[str, str, tuple[Target, ...]]] = [
    ("matplotlib figure saved as svg from a python block", "mixed", (("Version 9.5", "=ob-python.el= improvements to =:return="),)),
    ("inkscape converts the PDF", "word", (("Version 9.5", "New options and new behavior for babel LaTeX SVG image files"),)),
    ("a deadline drawn in red italics", "meaning", (("Version 9.5", "New faces to improve the contextuality"),)),
    ("links escaped with a backslash instead of percent signs", "mixed", (("Version 9.3", "Change bracket link escaping syntax"),)),
    ("attachment folder named after the ID", "mixed", (("Version 9.3", "Org-Attach has been refactored and extended"),)),
    ("bananas shipments confirmed", "word", (("Version 9.2", "=org-columns-summary-types= entries can take"),)),
    ("watch the output of a long clojure computation while it runs", "meaning", (("Version 9.1", "Clojure: new header ~:show-process~"),)),
    ("repair old export blocks and include keywords", "mixed", (("Version 9.0", "New syntax for export blocks"),)),
    ("priorities given as numbers", "mixed", (("Version 9.4", "Numeric priorities are now allowed"),)),
    ("close a clock left running at a time I give", "meaning", (("Version 9.4", "New option to resolve open clock at a provided time"),)),
    ("number the headings when a file is opened", "meaning", (("Version 9.4", "New option ~org-startup-numerated~"),)),
    ("Org Drill", "word", (("Version 9.3", "Removed Org Drill"),)),
    ("text under headings is no longer indented by default", "meaning", (("Version 9.5", "~org-adapt-indentation~ now defaults to =nil="),)),
    ("DOI links", "word", (("Version 9.5", "Support exporting DOI links"),)),
    ("an old release of the editor is not supported anymore", "meaning", (("Version 9.0", "Emacs 23 support has been dropped"),)),
    ("compile haskell blocks", "mixed", (("Version 9.4", "=ob-haskell.el= supports compilation"),)),
    ("edit a source block in a window beside the text", "meaning", (("Version 9.3", "Add ~split-window-right~ option"),)),
    ("comment out a heading with M-;", "mixed", (("Version 9.2", "~org-comment-dwim~"),)),
    ("ClojureScript", "word", (("Version 9.4", "=ob-clojure.el= supports inf-clojure.el"),)),
    ("what a python session block may return", "mixed", (("Version 9.4", "Python session return values must be top-level"),)),
    ("the timeline view is gone", "mixed", (("Version 9.1", "Org Timeline"),)),
    ("create missing directories for the dir header", "mixed", (("Version 9.3", "~:mkdirp~ now supports"),)),
    ("store ID locations as relative file names", "mixed", (("Version 9.3", "org-id-locations-relative"),)),
    ("miscellaneous changes in version 9.4", "mixed", (("Version 9.4", "Miscellaneous"),)),
    ("new options of Org 9.5", "mixed", (("Version 9.5", "New options"),)),
]


# More tuning questions on Org 9.x, written after ``TUNING`` and before the fusion,
# passages and full-text words were tuned again: paraphrases in the words a person
# would use, most sharing no rare word with their target. Tuning only.
PARAPHRASES: list[tuple[str, str, tuple[Target, ...]]] = [
    ("ask me to stop the clock when I quit emacs", "meaning", (("Version 9.5", "org-clock-ask-before-exiting"),)),
    ("only show the first two levels of headings when a file opens", "meaning", (("Version 9.5", "show<n>levels"),)),
    ("run a python block without freezing the editor", "meaning", (("Version 9.5", "Async session evaluation"),)),
    ("cite papers and print a bibliography", "meaning", (("Version 9.5", "New citation engine"),)),
    ("write a formal letter and export it", "meaning", (("Version 9.5", "ox-koma-letter.el"),)),
    ("pictures scaled to the width of the window", "meaning", (("Version 9.5", "Display images with width proportional"),)),
    ("refile an entry to the top of its new parent instead of the bottom", "meaning", (("Version 9.5", "org-refile-reverse"),)),
    ("the extra user-contributed packages moved out of the main repository", "meaning", (("Version 9.5", "The =contrib/= now lives in a separate repository"),)),
    ("the jar for ascii diagrams is not shipped any more", "mixed", (("Version 9.5", "=ditaa.jar= is not bundled"),)),
    ("share of time spent in each file in the clock report", "meaning", (("Version 9.5", "Clocktable option =:formula %="),)),
    ("webp pictures in the web page export", "mixed", (("Version 9.5", "now includes .webp"),)),
    ("a header row that stays visible while scrolling down a long table", "meaning", (("Version 9.4", "New minor mode ~org-table-header-line-mode~"), ("Version 9.4", "~org-table-header-line-mode~"), ("Version 9.4", "org-table-header-line-p"))),
    ("checkboxes where ticking one unticks the others", "meaning", (("Version 9.4", "org-list-checkbox-radio-mode"),)),
    ("file-wide properties at the top before any heading", "meaning", (("Version 9.4", "Property drawers allowed before first headline"),)),
    ("stop the clock by itself when I have been away", "meaning", (("Version 9.4", "org-clock-auto-clockout-timer"),)),
    ("show pictures stored on a remote machine", "meaning", (("Version 9.4", "Display remote inline images"),)),
    ("clock report split into half months", "meaning", (("Version 9.4", "semimonth"),)),
    ("links to headings in the same file may not work after upgrading", "meaning", (("Version 9.4", "Possibly broken internal file links"),)),
    ("open the agenda in a tab", "mixed", (("Version 9.4", "New option for using tabs"),)),
    ("a task that repeats some hours after I last did it", "meaning", (("Version 9.4", "Handle repeated tasks with =.+= type and hours step"),)),
    ("durations written short like 1d 3h", "mixed", (("Version 9.4", "Duration can be read and written in compact form"),)),
    ("a bug that lived for seven years", "meaning", (("Version 9.4", "The end of a 7 years old bug"),)),
    ("long lines of code wrapped in the HTML output", "mixed", (("Version 9.3", "New option to wrap source code lines in HTML export"),)),
    ("scheduled items and deadlines in the exported calendar", "mixed", (("Version 9.3", "schedules and deadlines in iCalendar export"),)),
    ("keep private entries out of the exported calendar", "meaning", (("Version 9.3", "iCalendar export respects a =CLASS= property"),)),
    ("numbers shown before the headings on screen without changing the file", "meaning", (("Version 9.3", "New minor mode to display headline numbering"),)),
    ("copy a subtree several times with its dates moved into the past", "meaning", (("Version 9.3", "org-clone-subtree-with-time-shift"),)),
    ("hide habits I already did today from the agenda", "meaning", (("Version 9.3", "Toggle display of all vs. undone scheduled habits"), ("Version 9.3", "~org-habit-toggle-display-in-agenda~"))),
    ("a table keeps 007 as text rather than a number", "meaning", (("Version 9.3", "Org Table reads numbers starting with 0 as strings"),)),
    ("the mode that gave other major modes org-like outlines is gone", "meaning", (("Version 9.2", "Removal of OrgStruct mode"),)),
    ("typing <s and TAB no longer inserts a source block", "mixed", (("Version 9.2", "Change in the structure template expansion"), ("Version 9.2", "Org Tempo"))),
    ("sorting follows the alphabet of my language", "meaning", (("Version 9.2", "Alphabetic sorting in headings and tags"), ("Version 9.2", "Alphabetic sorting in tables and lists"))),
    ("cut the subtree at point with one key", "meaning", (("Version 9.2", "New speed command \"k\""),)),
    ("no header line at the top of a custom agenda", "meaning", (("Version 9.2", "Disable =org-agenda-overriding-header="),)),
    ("restrict the agenda to the subtree under the cursor", "meaning", (("Version 9.2", "~org-agenda-set-restriction-lock~ toggle"),)),
    ("javascript blocks evaluated in a live session", "mixed", (("Version 9.2", "ob-js for js-comint"), ("Version 9.2", "ob-js for Indium"), ("Version 9.2", "ob-js for skewer-mode"))),
    ("journal entries filed by week number of the year", "meaning", (("Version 9.0", "Support for ISO week trees"),)),
    ("check my org files for syntax mistakes", "meaning", (("Version 9.0", "New Org linter library"),)),
    ("the date it was scheduled for goes away once a repeating task is done", "meaning", (("Version 9.0", "Clear non-repeated SCHEDULED"),)),
    ("browse the web inside emacs and store links to pages", "meaning", (("Version 9.0", "~org-eww~ has been moved into core"),)),
    ("plain text accounting reports in code blocks", "meaning", (("Version 9.1", "hledger"),)),
    ("the time zone of an event in the calendar export", "mixed", (("Version 9.1", "iCalendar export respects a TIMEZONE property"), ("Version 9.1", "iCalendar export uses inheritance for TIMEZONE"))),
    ("attach a file downloaded from the web", "meaning", (("Version 9.1", "attaching files from URLs"),)),
    ("a library to read and print lengths of time", "meaning", (("Version 9.1", "New Org duration library"),)),
    ("name the exported file from inside the document", "meaning", (("Version 9.1", "EXPORT_FILE_NAME"),)),
]

def write_memex(directory: Path) -> None:
    """The memex: ORG-NEWS as one org file."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ORG_NEWS, directory / "org-news.org")


def outline(store: MemoryStore) -> dict[str, list[str]]:
    """id -> titles from the top heading down to the node, for every heading."""
    out: dict[str, list[str]] = {}
    todo: list[tuple[MemoryNode, list[str]]] = [(n, []) for n in store.children(None)]
    while todo:
        node, above = todo.pop()
        if node.id.startswith(FILE_PREFIX):  # a file's node is no heading
            path = above
        else:
            path = [*above, node.title]
            out[node.id] = path
        todo.extend((c, path) for c in store.children(node.id))
    return out


def resolve(store: MemoryStore, queries: Iterable[tuple[str, str, tuple[Target, ...]]],
            ) -> list[tuple[str, str, tuple[str, ...]]]:
    """The queries with node ids for their targets; an error names a target that
    matches no heading or more than one."""
    paths = outline(store)
    out = []
    for query, kind, targets in queries:
        ids = []
        for version, piece in targets:
            found = [i for i, p in paths.items() if p[0] == version and piece == p[-1]] or [
                i for i, p in paths.items() if p[0] == version and piece in p[-1]]
            if len(found) != 1:
                raise ValueError(f"{query!r}: {version} / {piece!r} matches {len(found)} headings")
            ids.append(found[0])
        out.append((query, kind, tuple(ids)))
    return out


if __name__ == "__main__":  # `make bench` runs every file here; this one is data
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        memex = Path(tmp) / "memex"
        write_memex(memex)
        store = MemoryStore.open(Path(tmp) / "memory.sqlite3")
        store.import_memex(memex)
        print(f"held-out retrieval half: ORG-NEWS, {len(outline(store))} headings,"
              f" {len(resolve(store, HELDOUT))} queries")
        store.close()
