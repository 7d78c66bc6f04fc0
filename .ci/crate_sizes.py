#!/usr/bin/env python3
"""Fails when one crate holds more than a fifth of the workspace's code.

Counts the non-test lines of every crate's src/: each .rs file up to its
`#[cfg(test)] mod tests` block, leaving out test-only files (a module
declared under `#[cfg(test)]`, such as `tests.rs`). Blank lines and
comments count: they are part of what a newcomer reads.

Usage: crate_sizes.py [--max SHARE] CRATE_DIR...   (prints the table)
"""

import re
import sys
from pathlib import Path

TESTS = re.compile(r"#\[cfg\(test\)\]\s*mod tests\b")
TEST_ONLY = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+([a-z_0-9]+)\s*;")


def test_only_files(src: Path) -> set[Path]:
    """Files of modules declared only under #[cfg(test)]."""
    out = set()
    for file in src.rglob("*.rs"):
        for name in TEST_ONLY.findall(file.read_text()):
            base = file.parent if file.name in ("lib.rs", "main.rs", "mod.rs") else file.with_suffix("")
            for cand in (base / f"{name}.rs", base / name / "mod.rs"):
                if cand.exists():
                    out.add(cand)
    return out


def lines(src: Path) -> int:
    skip = test_only_files(src)
    total = 0
    for file in src.rglob("*.rs"):
        if file in skip or "tests" in file.relative_to(src).parts[:-1]:
            continue
        text = TESTS.split(file.read_text())[0]
        total += text.count("\n")
    return total


def main(argv: list[str]) -> int:
    share = 0.20
    if argv[:1] == ["--max"]:
        share, argv = float(argv[1]), argv[2:]
    sizes = {Path(d).name: lines(Path(d) / "src") for d in argv if (Path(d) / "src").is_dir()}
    whole = sum(sizes.values())
    over = []
    for name, n in sorted(sizes.items(), key=lambda kv: -kv[1]):
        print(f"{name:<10} {n:>6} lines  {100 * n / whole:5.1f} %")
        if n > share * whole:
            over.append(name)
    print(f"{'all':<10} {whole:>6} lines")
    if over:
        print(f"more than {share:.0%} of the workspace's code: {', '.join(over)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
