#!/usr/bin/env python3
"""Checks of the user documentation: the mdBook under docs/ and the root Markdown files.

The book (docs/book.toml, chapters under docs/src/, their order in docs/src/SUMMARY.md) is
read on a code host as plain Markdown as much as it is built by mdBook, and its shell
examples are meant to be typed. Two checks keep it true without mdBook installed:

  links     Every relative link and anchor in docs/src/**/*.md, README.md and
            ARCHITECTURE.md resolves: a link is read relative to its own file, a `#anchor`
            must be a heading of the target Markdown file (slugs as mdBook and GitHub make
            them: lowercase, spaces to `-`, punctuation other than `-` and `_` dropped,
            `-1`, `-2`… for repeats; `{{#include}}` is followed). Every chapter SUMMARY.md
            lists exists, and every .md file under docs/src is listed. http(s) and mailto
            links are not fetched. Prints each broken link as file:line and exits 1.

  examples  Runs the shell blocks whose info string is `sh,tested`, chapter by chapter in
            SUMMARY order: each chapter's blocks run in order, in one fresh temporary
            directory, each with `bash -euo pipefail`, the directory of the binary given by
            --quiver first on PATH (as `quiver`) and QUIVER_SHARED set (default: the
            directory `shared` beside the repository). A block passes when it exits 0.
            Prints ok or FAILED with file:line per block and the output of failed blocks
            (with the chapter line of the command that stopped the block); exits 1 when a
            block failed or when no tested block was found.

Standard library only, so that it runs wherever Python 3 does.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SRC = DOCS / "src"
SUMMARY = SRC / "SUMMARY.md"
ROOT_FILES = [ROOT / "README.md", ROOT / "ARCHITECTURE.md"]
TESTED_INFO = "sh,tested"

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
# [text](target) and ![alt](target); the target may be <wrapped> and followed by a title.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
INCLUDE = re.compile(r"\{\{#include\s+([^}\s]+)\s*\}\}")
SKIPPED_SCHEMES = ("http://", "https://", "mailto:")


def relative(path):
    """`path` relative to the repository, for messages."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def outside_fences(text):
    """(line number, line) of the lines outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group("fence")
                continue
            yield number, line
        elif match and match.group("fence")[0] == fence[0] and len(match.group("fence")) >= len(
            fence
        ) and not match.group("info").strip():
            fence = None


def prose_lines(text):
    """(line number, line) of the lines outside fenced code blocks, inline code removed."""
    for number, line in outside_fences(text):
        yield number, re.sub(r"(`+)(?:(?!\1).)+?\1", "", line)


def expanded(path, seen=()):
    """The text of a Markdown file with its `{{#include FILE}}` lines replaced by the file."""
    text = path.read_text(encoding="utf-8")

    def include(match):
        target = (path.parent / match.group(1).split(":")[0]).resolve()
        if target in seen or not target.is_file():
            return ""
        return expanded(target, seen + (path.resolve(),))

    return INCLUDE.sub(include, text)


def slug(heading):
    """The anchor of a heading as mdBook and GitHub make it."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"(?<!\w)_+|_+(?!\w)", "", text)  # emphasis underscores, not snake_case
    out = []
    for char in text.strip():
        if char.isalnum() or char in "-_":
            out.append(char.lower())
        elif char.isspace():
            out.append("-")
    return "".join(out)


_anchors = {}


def anchors(path):
    """The anchors of the headings of a Markdown file (included files followed)."""
    path = path.resolve()
    if path not in _anchors:
        found = set()
        counts = {}
        for _, line in outside_fences(expanded(path)):
            match = HEADING.match(line)
            if not match:
                continue
            base = slug(match.group(2))
            count = counts.get(base, 0)
            counts[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        # Explicit ids: <a name="x"> / <a id="x"> and mdBook's {#x}.
        text = path.read_text(encoding="utf-8")
        found.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", text))
        found.update(re.findall(r"\{#([\w-]+)\}", text))
        _anchors[path] = found
    return _anchors[path]


def links_in(path):
    """(line, target) of every link of a Markdown file outside code."""
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for match in INLINE_LINK.finditer(line):
            yield number, match.group(1).strip("<>")
        match = REFERENCE_DEFINITION.match(line)
        if match:
            yield number, match.group(1).strip("<>")
    # {{#include}} directives are links too (they sit in prose).
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for match in INCLUDE.finditer(line):
            yield number, match.group(1).split(":")[0]


def check_link(source, target):
    """Why the link `target` of the file `source` is broken, or None."""
    if target.startswith(SKIPPED_SCHEMES) or re.match(r"^[a-z][a-z0-9+.-]*:", target):
        return None
    path_part, _, anchor = target.partition("#")
    path_part = path_part.split("?")[0]
    if path_part:
        resolved = (source.parent / path_part).resolve()
        if not resolved.exists():
            return f"{path_part} does not exist"
        try:
            resolved.relative_to(ROOT)
        except ValueError:
            return f"{path_part} leaves the repository"
    else:
        resolved = source.resolve()
    if anchor:
        if resolved.is_dir() or resolved.suffix.lower() != ".md":
            return None
        if anchor not in anchors(resolved):
            return f"no heading #{anchor} in {relative(resolved)}"
    return None


def summary_chapters():
    """(line, path) of each chapter SUMMARY.md lists, in order (drafts, `()`, left out)."""
    chapters = []
    for number, line in prose_lines(SUMMARY.read_text(encoding="utf-8")):
        for match in INLINE_LINK.finditer(line):
            target = match.group(1).strip("<>")
            if target:
                chapters.append((number, target))
    return chapters


def command_links(_args):
    problems = []
    files = sorted(SRC.rglob("*.md")) + [f for f in ROOT_FILES if f.exists()]
    for path in files:
        for number, target in links_in(path):
            reason = check_link(path, target)
            if reason:
                problems.append(f"{relative(path)}:{number}: broken link {target}: {reason}")
    if not SUMMARY.exists():
        problems.append(f"{relative(SUMMARY)}: missing")
    else:
        listed = set()
        for number, target in summary_chapters():
            chapter = (SRC / target.split("#")[0]).resolve()
            listed.add(chapter)
            if not chapter.is_file():
                problems.append(f"{relative(SUMMARY)}:{number}: chapter {target} does not exist")
        for path in sorted(SRC.rglob("*.md")):
            if path.resolve() != SUMMARY.resolve() and path.resolve() not in listed:
                problems.append(f"{relative(path)}: not listed in {relative(SUMMARY)}")
    for problem in problems:
        print(problem)
    checked = len(files)
    if problems:
        print(f"links: {len(problems)} problem(s) in {checked} files")
        return 1
    print(f"links: {checked} files, no broken link")
    return 0


def tested_blocks(path):
    """(line of the opening fence, script) of each `sh,tested` block of a chapter."""
    blocks = []
    fence = None
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group("fence")
                info = match.group("info").strip().replace(" ", "")
                body = [] if info == TESTED_INFO else None
                start = number
        elif match and match.group("fence")[0] == fence[0] and len(match.group("fence")) >= len(
            fence
        ) and not match.group("info").strip():
            if body is not None:
                blocks.append((start, "\n".join(body) + "\n"))
            fence = None
        elif body is not None:
            body.append(line)
    return blocks


def run_block(script, where, line, directory, env, timeout):
    """Runs one block; (exit status or None on timeout, output, seconds).

    A first line is added that names the failing command and its line in the chapter
    (`where`, the fence at `line`) when a command stops the block."""
    report = (
        f"trap 'echo \"book.py: exit $? at {where}:$(({line} + LINENO - 1)): $BASH_COMMAND\" >&2' ERR\n"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as file:
        file.write(report + script)
        script_path = file.name
    output_path = script_path + ".out"
    started = time.monotonic()
    try:
        with open(output_path, "wb") as output:
            process = subprocess.Popen(
                ["bash", "-euo", "pipefail", script_path],
                cwd=directory,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                status = process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                status = None
            # Whatever the block left running in the background (a server) goes too.
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            if status is None:
                process.wait()
        seconds = time.monotonic() - started
        with open(output_path, "rb") as output:
            text = output.read().decode("utf-8", errors="replace")
        return status, text, seconds
    finally:
        for leftover in (script_path, output_path):
            try:
                os.unlink(leftover)
            except FileNotFoundError:
                pass


def command_examples(args):
    binary = Path(args.quiver).expanduser()
    if not binary.is_file() or not os.access(binary, os.X_OK):
        print(f"examples: {args.quiver} is not an executable file", file=sys.stderr)
        return 1
    binary = binary.resolve()
    shared = Path(os.environ.get("QUIVER_SHARED") or ROOT.parent / "shared").resolve()
    chapters = []
    for _, target in summary_chapters():
        path = SRC / target.split("#")[0]
        if path.is_file():
            blocks = tested_blocks(path)
            if args.filter:
                blocks = [b for b in blocks if args.filter in f"{relative(path)}:{b[0]}"]
            if blocks:
                chapters.append((path, blocks))
    total = sum(len(blocks) for _, blocks in chapters)
    if total == 0:
        print(f"examples: no `{TESTED_INFO}` block found", file=sys.stderr)
        return 1
    if not shared.is_dir():
        print(f"examples: warning: QUIVER_SHARED={shared} is not a directory", file=sys.stderr)

    bin_dir = Path(tempfile.mkdtemp(prefix="quiver-book-bin-"))
    (bin_dir / "quiver").symlink_to(binary)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["QUIVER_SHARED"] = str(shared)
    print(f"examples: {total} block(s) in {len(chapters)} chapter(s), quiver = {binary}")
    failed = 0
    try:
        for path, blocks in chapters:
            directory = tempfile.mkdtemp(prefix="quiver-book-")
            try:
                for line, script in blocks:
                    status, output, seconds = run_block(
                        script, relative(path), line, directory, env, args.timeout
                    )
                    where = f"{relative(path)}:{line}"
                    if status == 0:
                        print(f"ok      {where} ({seconds:.1f} s)")
                        continue
                    failed += 1
                    why = f"timed out after {args.timeout} s" if status is None else f"exit {status}"
                    print(f"FAILED  {where} ({why}, {seconds:.1f} s)")
                    shown = output.splitlines()[-200:]
                    for text in shown or ["(no output)"]:
                        print(f"    | {text}")
            finally:
                if args.keep:
                    print(f"        kept {directory}")
                else:
                    shutil.rmtree(directory, ignore_errors=True)
    finally:
        shutil.rmtree(bin_dir, ignore_errors=True)
    if failed:
        print(f"examples: {failed} of {total} block(s) failed")
        return 1
    print(f"examples: all {total} block(s) passed")
    return 0


def main():
    sys.stdout.reconfigure(line_buffering=True)
    parser = argparse.ArgumentParser(
        prog="scripts/book.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    links = commands.add_parser(
        "links",
        help="check relative links and anchors, and SUMMARY.md against the chapters",
        description="Checks every relative link and anchor of docs/src/**/*.md, README.md and "
        "ARCHITECTURE.md, and that SUMMARY.md lists exactly the chapters under docs/src.",
    )
    links.set_defaults(run=command_links)
    examples = commands.add_parser(
        "examples",
        help="run the `sh,tested` shell blocks of the book against a quiver binary",
        description="Runs the `sh,tested` blocks of the chapters in SUMMARY order: a fresh "
        "temporary directory per chapter, its blocks in order with bash -euo pipefail, "
        "`quiver` on PATH and QUIVER_SHARED set.",
    )
    examples.add_argument(
        "--quiver", required=True, metavar="PATH", help="the quiver binary (target/release/quiver)"
    )
    examples.add_argument(
        "--timeout", type=float, default=120, metavar="SECONDS",
        help="time limit of one block (default 120)",
    )
    examples.add_argument(
        "--filter", metavar="TEXT", help="only the blocks whose FILE:LINE contains TEXT"
    )
    examples.add_argument(
        "--keep", action="store_true", help="keep the chapters' temporary directories"
    )
    examples.set_defaults(run=command_examples)
    args = parser.parse_args()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
