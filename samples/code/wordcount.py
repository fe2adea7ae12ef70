#!/usr/bin/env python3
"""Count words in text files, the way a first program reads a folder: one file at a time."""

import collections
import pathlib
import sys


def words(path: pathlib.Path):
    """Yield the lowercase words of one file, skipping what is not UTF-8."""
    text = path.read_text(encoding="utf-8", errors="replace")
    for token in text.split():
        word = token.strip(".,;:!?\"'()[]{}").lower()
        if word:
            yield word


def main(arguments):
    counts = collections.Counter()
    for argument in arguments or ["."]:
        root = pathlib.Path(argument)
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            counts.update(words(path))
    for word, count in counts.most_common(20):
        print(f"{count:8d}  {word}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
