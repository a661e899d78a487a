"""The options each allowlisted command may take without asking.

A command on the allowlist runs without asking only with the options declared here;
an unknown option, an ambiguous abbreviation and every option that writes a file, runs
a program or changes the system ask. ``find``, ``sed`` and ``git`` have their own
readers (an expression, a script, subcommands), the bash builtins ``echo``, ``printf``,
``cd``, ``pwd``, ``true`` and ``false`` theirs.
"""

from __future__ import annotations

from collections.abc import Callable

from passepartout.security.shell.find import check_find
from passepartout.security.shell.git import check_git
from passepartout.security.shell.options import Reading, Spec, read_argv
from passepartout.security.shell.rules import sed_script_safe

WRITES = "writes a file"
RUNS = "runs a program"

SPECS: dict[str, Spec] = {
    "ls": Spec(
        flags="aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
        valued="ITw",
        longs="""all almost-all author escape block-size= ignore-backups color? directory
        dired classify? file-type format= full-time group-directories-first no-group
        human-readable si dereference-command-line dereference-command-line-symlink-to-dir
        hide= hyperlink? indicator-style= inode ignore= kibibytes dereference
        numeric-uid-gid literal hide-control-chars show-control-chars quote-name
        quoting-style= reverse recursive size sort= time= time-style= tabsize= width=
        context zero help version""",
    ),
    "cat": Spec(
        flags="AbeEnstTuv",
        longs="""show-all number-nonblank show-ends number squeeze-blank show-tabs
        show-nonprinting help version""",
    ),
    "grep": Spec(
        flags="EFGPiyvwxczLlHhnbsqoaIrRUTZV",
        valued="efmABCdD",
        numbers=True,
        longs="""extended-regexp fixed-strings basic-regexp perl-regexp regexp= file=
        ignore-case no-ignore-case word-regexp line-regexp null-data no-messages
        invert-match version help max-count= byte-offset line-number no-line-number
        line-buffered with-filename no-filename label= only-matching quiet silent
        binary-files= text directories= devices= recursive dereference-recursive
        include= exclude= exclude-from= exclude-dir= files-without-match
        files-with-matches count initial-tab null before-context= after-context=
        context= color? colour? binary""",
    ),
    "rg": Spec(
        flags="aiSsvwxnNlcoFHILpqUuPb0.hV",
        valued="egtTABCmdfrEMj",
        longs="""regexp= file= after-context= before-context= context= binary
        no-binary block-buffered line-buffered byte-offset case-sensitive color= colors=
        column no-column context-separator= count count-matches crlf no-crlf debug trace
        dfa-size-limit= encoding= engine= field-context-separator= field-match-separator=
        files files-with-matches files-without-match fixed-strings no-fixed-strings
        follow no-follow glob= glob-case-insensitive no-glob-case-insensitive heading
        no-heading hidden no-hidden iglob= ignore-case ignore-file= ignore-file-case-insensitive
        include-zero invert-match json no-json line-number no-line-number line-regexp
        max-columns= max-columns-preview max-count= max-depth= max-filesize= mmap no-mmap
        multiline no-multiline multiline-dotall no-config no-ignore no-ignore-dot
        no-ignore-exclude no-ignore-files no-ignore-global no-ignore-messages
        no-ignore-parent no-ignore-vcs no-messages no-pcre2-unicode no-unicode null
        null-data one-file-system only-matching passthru path-separator= pcre2
        pcre2-version pretty quiet regex-size-limit= replace= smart-case sort= sortr=
        stats no-stats text threads= trim no-trim type= type-not= type-add= type-clear=
        type-list unrestricted vimgrep with-filename no-filename word-regexp
        auto-hybrid-regex no-auto-hybrid-regex help version""",
        risky={
            "--pre": "runs a preprocessor program",
            "--pre-glob": "selects files for a preprocessor program",
            "-z": "runs decompression programs",
            "--search-zip": "runs decompression programs",
            "--hostname-bin": RUNS,
        },
    ),
    "wc": Spec(
        flags="cmlLw",
        longs="bytes chars lines max-line-length words files0-from= total= help version",
    ),
    "head": Spec(
        flags="qvz",
        valued="cn",
        numbers=True,
        longs="bytes= lines= quiet silent verbose zero-terminated help version",
    ),
    "tail": Spec(
        flags="fFqvz",
        valued="cns",
        numbers=True,
        longs="""bytes= follow? lines= max-unchanged-stats= pid= quiet silent retry
        sleep-interval= verbose zero-terminated help version""",
    ),
    "sort": Spec(
        flags="bdfgiMhnRrVcCmsuz",
        valued="ktS",
        longs="""ignore-leading-blanks dictionary-order ignore-case general-numeric-sort
        ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort
        random-source= reverse sort= version-sort batch-size= check? debug files0-from=
        key= merge field-separator= buffer-size= stable unique zero-terminated
        parallel= help version""",
        risky={
            "-o": WRITES,
            "--output": WRITES,
            "--compress-program": RUNS,
            "-T": "writes temporary files in a directory it names",
            "--temporary-directory": "writes temporary files in a directory it names",
        },
    ),
    "uniq": Spec(
        flags="cdDiuz",
        valued="fsw",
        longs="""count repeated all-repeated? skip-fields= ignore-case skip-chars= unique
        zero-terminated check-chars= group? help version""",
    ),
    "cut": Spec(
        flags="nsz",
        valued="bcdf",
        longs="""bytes= characters= delimiter= fields= complement only-delimited
        output-delimiter= zero-terminated help version""",
    ),
    "tr": Spec(flags="cCdst", longs="complement delete squeeze-repeats truncate-set1 help version"),
    "basename": Spec(flags="az", valued="s", longs="multiple suffix= zero help version"),
    "dirname": Spec(flags="z", longs="zero help version"),
    "realpath": Spec(
        flags="emLPqsz",
        longs="""canonicalize-existing canonicalize-missing logical physical quiet
        relative-to= relative-base= no-symlinks strip zero help version""",
    ),
    "stat": Spec(
        flags="Lft",
        valued="c",
        longs="dereference file-system format= printf= terse cached= help version",
    ),
    "du": Spec(
        flags="0aAbcDhHklLmPsSx",
        valued="BdtX",
        longs="""null all apparent-size block-size= bytes total dereference-args max-depth=
        files0-from= human-readable inodes si summarize separate-dirs threshold= time?
        time-style= one-file-system exclude-from= exclude= count-links dereference
        no-dereference help version""",
    ),
    "nl": Spec(
        flags="p",
        valued="bdfhilnsvw",
        longs="""body-numbering= section-delimiter= footer-numbering= header-numbering=
        line-increment= join-blank-lines= number-format= no-renumber number-separator=
        starting-line-number= number-width= help version""",
    ),
    "tac": Spec(flags="br", valued="s", longs="before regex separator= help version"),
    "rev": Spec(flags="0V", longs="zero help version"),
    "diff": Spec(
        flags="abBcdeEfiNnpPqrsStTuwyZ",
        valued="CDFIUWxXSL",
        numbers=True,
        longs="""normal brief report-identical-files context? unified? ed rcs side-by-side
        width= left-column suppress-common-lines show-c-function show-function-line=
        label= expand-tabs initial-tab tabsize= suppress-blank-empty new-file
        unidirectional-new-file ignore-case ignore-tab-expansion
        ignore-trailing-space ignore-space-change ignore-all-space ignore-blank-lines
        ignore-matching-lines= text strip-trailing-cr recursive exclude= exclude-from=
        starting-file= from-file= to-file= ignore-file-name-case
        no-ignore-file-name-case minimal horizon-lines= speed-large-files
        line-format= old-line-format= new-line-format= unchanged-line-format=
        old-group-format= new-group-format= changed-group-format=
        unchanged-group-format= ifdef= color? palette= no-dereference binary help
        version""",
        risky={"-l": "runs pr on its output", "--paginate": "runs pr on its output"},
    ),
    "cmp": Spec(
        flags="blsz",
        valued="in",
        longs="print-bytes ignore-initial= verbose bytes= quiet silent zero help version",
    ),
    "comm": Spec(
        flags="123z",
        longs="check-order nocheck-order output-delimiter= total zero-terminated help version",
    ),
    "seq": Spec(
        flags="w",
        valued="fs",
        number_operands=True,
        longs="format= separator= equal-width help version",
    ),
    "whoami": Spec(longs="help version"),
    "uname": Spec(
        flags="asnrvmpio",
        longs="""all kernel-name nodename kernel-release kernel-version machine processor
        hardware-platform operating-system help version""",
    ),
    "id": Spec(
        flags="agGnruzZ",
        longs="context group groups name real user zero help version",
    ),
    "date": Spec(
        flags="Ru",
        valued="dfr",
        optional="I",
        longs="""date= debug file= iso-8601? resolution rfc-email rfc-3339= reference=
        utc universal help version""",
        risky={"-s": "sets the clock", "--set": "sets the clock"},
    ),
    "sed": Spec(
        flags="nErsuzb",
        valued="efl",
        longs="""quiet silent expression= file= regexp-extended separate unbuffered
        null-data line-length= posix debug sandbox follow-symlinks binary help version""",
        risky={"-i": "edits files in place", "--in-place": "edits files in place"},
    ),
    "pwd": Spec(flags="LP", permute=False),
    "cd": Spec(flags="LPe@", permute=False),
}


def _uniq(reading: Reading) -> list[str]:
    if len(reading.operands) > 1:
        return ["uniq writes its output to its second file operand"]
    return []


def _date(reading: Reading) -> list[str]:
    return [
        f"date {op} sets the clock (only a +FORMAT operand runs without asking)"
        for op in reading.operands
        if not op.startswith("+")
    ]


def _sed(reading: Reading) -> list[str]:
    scripts = [v or "" for o, v in reading.options if o in ("-e", "--expression")]
    operands = list(reading.operands)
    if any(o in ("-f", "--file") for o, _ in reading.options):
        return ["sed -f reads a script that was not shown"]
    if not scripts and operands:
        scripts.append(operands.pop(0))
    if not scripts:
        return ["sed without a script"]
    if any(not sed_script_safe(s) for s in scripts):
        return [
            "sed script uses e, w, r or another command beyond s, y, p, d, q, n and the "
            "like (it could run programs or write files)"
        ]
    return []


def _cd(reading: Reading) -> list[str]:
    if reading.options:
        return ["cd with options"]
    if reading.operands == ["-"] or len(reading.operands) > 1:
        return ["cd - or cd with several operands (where it goes is not known)"]
    return []


AFTER: dict[str, Callable[[Reading], list[str]]] = {
    "uniq": _uniq,
    "date": _date,
    "sed": _sed,
    "cd": _cd,
}


def _printf(argv: list[str]) -> list[str]:
    # `printf -v PATH .` assigns a shell variable, which can change what later commands run.
    first = argv[1] if len(argv) > 1 else ""
    if first.startswith("-") and first not in ("--", "-"):
        return [f"printf {first}: printf -v assigns a shell variable; other options ask too"]
    return []


CUSTOM: dict[str, Callable[[list[str]], list[str]]] = {
    "find": check_find,
    "git": check_git,
    "printf": _printf,
    "echo": lambda argv: [],  # bash's echo takes -n, -e, -E and prints anything else
    "true": lambda argv: [],
    "false": lambda argv: [],
}

DECLARED = frozenset(SPECS) | frozenset(CUSTOM)


def check_options(argv: list[str]) -> list[str] | None:
    """Reasons to ask about ``argv``'s options; None when the program declares none."""
    name = argv[0]
    custom = CUSTOM.get(name)
    if custom is not None:
        return custom(argv)
    spec = SPECS.get(name)
    if spec is None:
        return None
    reading = read_argv(name, argv[1:], spec)
    after = AFTER.get(name)
    if not reading.asks and after is not None:
        return after(reading)
    return reading.asks
