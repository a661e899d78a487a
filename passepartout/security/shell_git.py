"""git on the command line: which subcommands and options run without asking.

Only git's own read-only subcommands (never an alias: git looks builtins up first, and
nothing else is accepted) with declared options run without asking; options that write
(``--output``) or run programs (``--ext-diff``, ``--textconv``, ``--show-signature``,
``grep -O``) ask, as do global options that point git elsewhere or set its config
(``-c``, ``-C``, ``--git-dir``, ``--exec-path``...). What the repository itself
configures is checked apart, by :func:`git_hardening.repository_risks`.
"""

from __future__ import annotations

from passepartout.security.shell.options import Spec, read_argv
from passepartout.security.shell.rules import names

NETWORK = frozenset(
    {"clone", "fetch", "pull", "push", "ls-remote", "submodule", "send-email", "request-pull"}
)
GLOBAL_OK = names("""
    --no-pager -P --no-optional-locks --literal-pathspecs --glob-pathspecs
    --noglob-pathspecs --icase-pathspecs --no-replace-objects --no-lazy-fetch --no-advice
    """)
_RISKY_DIFF = {
    "--output": "writes a file",
    "--ext-diff": "runs an external diff program",
    "--textconv": "runs textconv programs",
}
_RISKY_LOG = {**_RISKY_DIFF, "--show-signature": "runs gpg"}

_DIFF = """
    patch no-patch unified? output-indicator-new? output-indicator-old?
    output-indicator-context? raw patch-with-raw indent-heuristic no-indent-heuristic
    minimal patience histogram anchored? diff-algorithm? stat? compact-summary numstat
    shortstat dirstat? cumulative dirstat-by-file? summary patch-with-stat name-only
    name-status submodule? color? no-color color-moved? no-color-moved color-moved-ws?
    no-color-moved-ws word-diff? word-diff-regex? color-words? no-renames rename-empty
    no-rename-empty check ws-error-highlight? full-index binary abbrev? break-rewrites?
    find-renames? find-copies? find-copies-harder irreversible-delete diff-filter?
    find-object? pickaxe-all pickaxe-regex skip-to? rotate-to? relative? no-relative text
    ignore-cr-at-eol ignore-space-at-eol ignore-space-change ignore-all-space
    ignore-blank-lines ignore-matching-lines? inter-hunk-context? function-context
    exit-code quiet no-textconv no-ext-diff ignore-submodules? src-prefix? dst-prefix?
    no-prefix default-prefix line-prefix? ita-invisible-in-index ita-visible-in-index
    stat-width? stat-name-width? stat-graph-width? stat-count? cc combined-all-paths
"""
_REVS = """
    oneline graph no-graph decorate? no-decorate decorate-refs? decorate-refs-exclude?
    clear-decorations source use-mailmap mailmap no-mailmap no-use-mailmap log-size all
    branches? tags? remotes? glob? exclude? reflog alternate-refs single-worktree not
    first-parent merges no-merges min-parents? max-parents? no-min-parents
    no-max-parents boundary ancestry-path? simplify-by-decoration full-history dense
    sparse simplify-merges show-pulls topo-order date-order author-date-order reverse
    no-walk? do-walk left-right left-only right-only cherry cherry-mark cherry-pick
    walk-reflogs grep-reflog? grep? author? committer? all-match invert-grep
    regexp-ignore-case basic-regexp extended-regexp fixed-strings perl-regexp max-count?
    skip? since? after? until? before? follow pretty? format? abbrev-commit
    no-abbrev-commit expand-tabs? no-expand-tabs notes? no-notes show-notes?
    standard-notes no-standard-notes relative-date date? parents children
    show-linear-break? count diff-merges? no-diff-merges remerge-diff encoding?
    in-commit-order
"""
_DIFF_SHORT = "pusazbwWRrtmc"
_DIFF_OPT = "MCBlXU"

_LOG = Spec(
    flags=_DIFF_SHORT + "iEFPg",
    valued="nLSG",
    optional=_DIFF_OPT,
    numbers=True,
    longs=_DIFF + _REVS,
    risky=_RISKY_LOG,
)
_DIFF_SPEC = Spec(
    flags=_DIFF_SHORT + "123q0",
    valued="SG",
    optional=_DIFF_OPT,
    longs=_DIFF + " cached staged merge-base no-index ours theirs base root stdin? no-commit-id"
    " pretty? always",
    risky=_RISKY_DIFF,
)

SUBCOMMANDS: dict[str, Spec] = {
    "log": _LOG,
    "show": _LOG,
    "whatchanged": _LOG,
    "diff": _DIFF_SPEC,
    "diff-tree": _DIFF_SPEC,
    "diff-files": _DIFF_SPEC,
    "diff-index": _DIFF_SPEC,
    "rev-list": Spec(
        flags="i",
        valued="n",
        numbers=True,
        longs=_REVS + " objects objects-edge header timestamp quiet disk-usage? filter?"
        " no-object-names object-names unpacked bisect bisect-vars bisect-all",
        risky={"--show-signature": "runs gpg"},
    ),
    "status": Spec(
        flags="sbvz",
        optional="u",
        longs="""short branch show-stash porcelain? long verbose untracked-files? ignored?
        ignore-submodules? column? no-column ahead-behind no-ahead-behind renames
        no-renames find-renames? null""",
    ),
    "rev-parse": Spec(
        flags="q",
        longs="""abbrev-ref? short? verify quiet show-toplevel show-prefix show-cdup git-dir
        git-common-dir is-inside-work-tree is-inside-git-dir is-bare-repository
        is-shallow-repository absolute-git-dir symbolic symbolic-full-name all branches?
        tags? remotes? glob? exclude? default? show-object-format? sq not since? until?
        after? before? local-env-vars path-format? git-path= show-superproject-working-tree
        shared-index-path flags no-flags revs-only no-revs""",
    ),
    "ls-files": Spec(
        flags="cdmoisukztvf",
        valued="xX",
        longs="""cached deleted modified others ignored stage directory no-empty-directory
        unmerged resolve-undo killed exclude? exclude-from? exclude-per-directory?
        exclude-standard error-unmatch with-tree? full-name recurse-submodules abbrev?
        debug eol deduplicate sparse format?""",
    ),
    "ls-tree": Spec(
        flags="drtlz",
        longs="long name-only name-status object-only full-name full-tree abbrev? format?",
    ),
    "blame": Spec(
        flags="bltfnspcew",
        valued="LS",
        optional="MC",
        longs="""root show-stats reverse? porcelain line-porcelain incremental encoding?
        contents? date? progress no-progress score-debug show-name show-number show-email
        minimal ignore-rev? ignore-revs-file? color-lines color-by-age abbrev? first-parent
        no-textconv""",
        risky={"--textconv": "runs textconv programs"},
    ),
    "shortlog": Spec(
        flags="nsec",
        optional="w",
        longs=_REVS + " numbered summary email group? committer",
    ),
    "describe": Spec(
        longs="""all tags contains abbrev? candidates? exact-match debug long match? exclude?
        always first-parent dirty? broken?""",
    ),
    "cat-file": Spec(
        flags="tsepZ",
        longs="""batch? batch-check? batch-command? batch-all-objects follow-symlinks
        unordered buffer allow-unknown-type mailmap use-mailmap no-mailmap""",
        risky={"--textconv": "runs textconv programs", "--filters": "runs filter programs"},
    ),
    "grep": Spec(
        flags="iIwvhHEGFPnlLzocqWpra",
        valued="efABCm",
        numbers=True,
        longs="""ignore-case no-ignore-case word-regexp invert-match full-name extended-regexp
        basic-regexp fixed-strings perl-regexp line-number column files-with-matches
        name-only files-without-match null only-matching count color? no-color break
        heading show-function function-context after-context? before-context? context?
        threads? max-depth? max-count? and or not all-match quiet cached untracked
        no-index recurse-submodules exclude-standard no-exclude-standard recursive
        no-recursive text no-textconv""",
        risky={
            "-O": "opens files in a pager program",
            "--open-files-in-pager": "opens files in a pager program",
            "--textconv": "runs textconv programs",
        },
    ),
    "name-rev": Spec(longs="tags refs? exclude? all annotate-stdin stdin name-only"
                     " no-undefined always"),
    "merge-base": Spec(flags="a", longs="all octopus independent is-ancestor fork-point"),
    "show-ref": Spec(
        flags="dsq",
        longs="head heads tags branches dereference hash? verify abbrev? quiet exists",
    ),
    "count-objects": Spec(flags="vH", longs="verbose human-readable"),
    "version": Spec(longs="build-options"),
}
_BRANCH_LIST = names("""
    -a --all -r --remotes -v -vv --verbose --list -l --show-current --no-color --color
    --column --no-column -i --ignore-case
    """)


def check_git(argv: list[str]) -> list[str]:
    """Reasons to ask about a git command line (empty: a read-only builtin, declared options)."""
    k = 1
    while k < len(argv) and argv[k].startswith("-"):
        a = argv[k]
        if a not in GLOBAL_OK:
            if a.startswith("-c") or a.startswith("--config"):
                return [f"git option {a} before the subcommand can set programs git runs"]
            return [f"git option {a} before the subcommand changes what git reads or runs"]
        k += 1
    if k >= len(argv):
        return []
    sub, rest = argv[k], argv[k + 1 :]
    if sub in NETWORK:
        return [f"git {sub} talks to the network"]
    special = _listing(sub, rest)
    if special is not None:
        return special
    spec = SUBCOMMANDS.get(sub)
    if spec is None:
        return [f"git {sub} is not a read-only git command (it may write, run hooks or programs)"]
    return read_argv(f"git {sub}", rest, spec).asks


def _listing(sub: str, rest: list[str]) -> list[str] | None:
    """branch, tag, remote and stash only when they list; None for other subcommands."""
    opts = rest[: rest.index("--")] if "--" in rest else rest
    if sub == "branch":
        listing = "--list" in opts or "-l" in opts
        if all(
            o in _BRANCH_LIST
            or o.startswith(("--sort=", "--format="))
            or (listing and not o.startswith("-"))
            for o in opts
        ):
            return []
        return ["git branch with these arguments changes branches"]
    if sub == "tag":
        if not opts or (
            opts[0] in ("-l", "--list") and all(o in ("-l", "--list") or not o.startswith("-")
                                                for o in opts)
        ):
            return []
        return ["git tag with these arguments changes tags"]
    if sub == "remote":
        if all(o in ("-v", "--verbose") for o in opts):
            return []
        return ["git remote with these arguments changes remotes"]
    if sub == "stash":
        if opts in (["list"], ["show"]):
            return []
        return ["git stash with these arguments changes the stash"]
    return None
