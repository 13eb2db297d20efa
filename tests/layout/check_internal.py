#!/usr/bin/env python3
"""Checks that each layer's internal/ headers stay inside that layer.

  check_internal.py --root SRC

A header under LAYER/.../internal/ (LAYER: core, dataflow, engine/vk, engine/graph,
towers, callbacks, train) is the layer's own: only files of the same layer include it,
and tests/ and bench/, which look inside on purpose. The library's other layers, the
examples and tools/ reach a layer through its public headers. Also fails where an
internal/ folder holds no header (a move left it behind) or an include of an internal
header names a file that does not exist. Prints FILE:LINE: what is wrong; exits 1 if
anything is.
"""
import argparse
import pathlib
import re
import sys

LAYERS = ("engine/vk", "engine/graph", "core", "dataflow", "towers", "callbacks", "train")
LOOKS_INSIDE = ("tests", "bench")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE = {".h", ".cpp"}


def layer_of(rel):
    for layer in LAYERS:
        if rel == layer or rel.startswith(layer + "/"):
            return layer
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    root = pathlib.Path(parser.parse_args().root)
    problems = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith((".", "build")) or "/." in rel:
            continue
        if path.is_dir() and path.name == "internal" and not any(path.glob("*.h")):
            problems.append(f"{rel}: an internal/ folder without headers")
        if path.suffix not in SOURCE or not path.is_file():
            continue
        if rel.split("/")[0] in LOOKS_INSIDE:
            continue
        own = layer_of(rel)
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match or "/internal/" not in match.group(1):
                continue
            target = match.group(1)
            if not (root / target).is_file():
                problems.append(f"{rel}:{number}: includes {target}, which does not exist")
            owner = layer_of(target)
            if owner != own:
                problems.append(f"{rel}:{number}: includes {target}, internal to {owner}/; "
                                f"{own + '/' if own else 'code outside the layers'} must use its public headers")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
