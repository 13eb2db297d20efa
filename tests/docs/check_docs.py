#!/usr/bin/env python3
"""Checks what the README and docs/ tell a reader to open or run, against the tree and a build.

  check_docs.py --root SRC --build BUILD [--skip FOLDER] [FILE.md ...]
                (default files: README.md and docs/*.md; --skip: a build folder not built)

1. Links: every relative Markdown link names a file or folder that exists, and a
   #fragment names a heading of that file (GitHub's anchors: lower case, punctuation
   dropped, spaces as hyphens; a repeated heading gets -1, -2, ...).
2. Commands, in fenced code blocks and `code spans`:
   - scripts/NAME exists, and each --flag written after it is in the script's text;
   - build/PATH (a program or file of the build) exists in BUILD;
   - `vkpack COMMAND` is a command of `vkpack help`, and each --flag after it is in that help;
   - an example run (build/examples/X/X, or scripts/run-example [X]) takes each --flag
     written after it: the flag is in the example's --help.
Prints one line per problem, FILE:LINE: what is wrong; exits 1 if there is any.
"""
import argparse
import pathlib
import re
import subprocess
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
SPAN = re.compile(r"`([^`]+)`")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
EXAMPLES = ("fashion_mnist", "resnet", "gan", "infogan", "embeddings", "char_rnn")


def slug(heading):
    # GitHub's anchors keep underscores inside words (examples/char_rnn); an underscore
    # that opens or closes emphasis goes, as do backquotes, asterisks and link targets.
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    text = re.sub(r"[`*]|(?<!\w)_|_(?!\w)", "", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            base = slug(line.lstrip("#"))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def code_lines(text):
    """(line number, code) for each fenced line (continuations joined) and each span."""
    fenced, pending, start = False, "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            if not pending:
                start = number
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            yield start, pending + line
            pending = ""
        else:
            for span in SPAN.findall(line):
                yield number, span


def prose_lines(text):
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield number, SPAN.sub("", line)


class Checker:
    def __init__(self, root, build, skip=()):
        self.root, self.build, self.skip = root, build, tuple(f"{folder}/" for folder in skip)
        self.problems = []
        self.helps = {}

    def name(self, path):
        return path.relative_to(self.root) if path.is_relative_to(self.root) else path

    def problem(self, where, what):
        self.problems.append(f"{where}: {what}")

    def help_of(self, program, *args):
        key = (program, args)
        if key not in self.helps:
            path = self.build / program
            if not path.exists():
                self.helps[key] = None
            else:
                run = subprocess.run([str(path), *args], capture_output=True, text=True, timeout=60)
                self.helps[key] = run.stdout + run.stderr
        return self.helps[key]

    def links(self, path, text):
        for number, line in prose_lines(text):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue  # http:, https:, mailto:
                file, _, fragment = target.partition("#")
                dest = (path.parent / file).resolve() if file else path
                where = f"{self.name(path)}:{number}"
                if not dest.exists():
                    self.problem(where, f"link to {target}: no such file")
                elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                    self.problem(where, f"link to {target}: {dest.name} has no heading #{fragment}")

    def flags_in(self, words, known, what, where):
        for flag in FLAG.findall(" ".join(words)):
            if flag not in known:
                self.problem(where, f"{what} takes no {flag}")

    def commands(self, path, text):
        for number, code in code_lines(text):
            where = f"{self.name(path)}:{number}"
            words = re.sub(r"(^|\s)#.*$", "", code).split()  # a shell comment is prose
            for i, word in enumerate(words):
                word = word.strip("\"'(),;:")
                rest = [w for w in words[i + 1:]]
                # Stop a command's words at the next command of the line.
                for j, w in enumerate(rest):
                    if w in ("&&", "||", "|", ";") or w.endswith(";"):
                        rest = rest[:j]
                        break
                if m := re.fullmatch(r"(?:\./)?scripts/([\w.-]+)", word):
                    script = self.root / "scripts" / m.group(1)
                    if not script.exists():
                        self.problem(where, f"{word}: no such script")
                        continue
                    if m.group(1) == "run-example":
                        example = rest[0] if rest and rest[0] in EXAMPLES else "fashion_mnist"
                        help_text = self.help_of(f"examples/{example}/{example}", "--help")
                        known = set(FLAG.findall(script.read_text(encoding="utf-8")))
                        if help_text is not None:
                            known |= set(FLAG.findall(help_text))
                        self.flags_in(rest, known, f"scripts/run-example {example}", where)
                    else:
                        self.flags_in(rest, set(FLAG.findall(script.read_text(encoding="utf-8"))), word, where)
                elif m := re.fullmatch(r"build/([\w./-]+)", word):
                    rel = m.group(1).rstrip(".")
                    if "*" in rel or "<" in rel or rel.startswith(self.skip) or not re.match(r"(bench|tools|examples|tests)/", rel):
                        continue
                    if not (self.build / rel).exists():
                        self.problem(where, f"{word}: not in the build ({self.build / rel})")
                        continue
                    if mm := re.fullmatch(r"examples/(\w+)/(\w+)", rel):
                        help_text = self.help_of(rel, "--help")
                        if help_text is not None:
                            self.flags_in(rest, set(FLAG.findall(help_text)), mm.group(2), where)
                    elif rel == "tools/vkpack":
                        self.vkpack(rest, where)
                elif word == "vkpack" and (i == 0 or words[i - 1] in ("&&", "||", "|", ";", "$", "sudo")):
                    self.vkpack(rest, where)

    def vkpack(self, rest, where):
        help_text = self.help_of("tools/vkpack", "help")
        if help_text is None or not rest or not re.fullmatch(r"[a-z][\w-]*", rest[0]):
            return
        commands = set(re.findall(r"^  ([a-z][\w-]*) ", help_text, re.M))
        if rest[0] not in commands:
            self.problem(where, f"vkpack {rest[0]}: not a command of `vkpack help` ({', '.join(sorted(commands))})")
        else:
            self.flags_in(rest[1:], set(FLAG.findall(help_text)), f"vkpack {rest[0]}", where)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, type=pathlib.Path)
    parser.add_argument("--build", required=True, type=pathlib.Path)
    parser.add_argument("--skip", action="append", default=[], help="a build folder that was not built (bench)")
    parser.add_argument("files", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    root = args.root.resolve()
    files = [f.resolve() for f in args.files] or [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    checker = Checker(root, args.build.resolve(), args.skip)
    for path in files:
        text = path.read_text(encoding="utf-8")
        checker.links(path, text)
        checker.commands(path, text)
    for line in checker.problems:
        print(line)
    print(f"check_docs: {len(files)} files, {len(checker.problems)} problems")
    return 1 if checker.problems else 0


if __name__ == "__main__":
    sys.exit(main())
