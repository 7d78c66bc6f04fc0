#!/usr/bin/env python3
"""Fails when the modules of a crate import each other in a circle.

A module is a top-level file or directory under a crate's src/ (for
`src/transfer/send/mod.rs` that is `transfer`, and inside it `transfer::send`
at the next level). Every `crate::a::b` path and every `super::x` path in a
module's files is an edge to the module it names. Cycles are looked for at
every level of nesting, so `transfer::send -> bench -> transfer::receive`
counts as `transfer -> bench -> transfer`.

Usage: import_cycles.py CRATE_DIR...   (exit 1 and the cycles if any)
"""

import re
import sys
from pathlib import Path

PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")


def module_of(src: Path, file: Path) -> list[str]:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return parts


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def edges(src: Path):
    """(from module path, to module path) for every path in the crate."""
    out = set()
    for file in src.rglob("*.rs"):
        here = module_of(src, file)
        text = strip_comments(file.read_text())
        # `#[cfg(test)] mod tests` blocks may reach anywhere: tests are not layers.
        text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
        for root, rest in PATH.findall(text):
            names = rest.strip(":").split("::")
            if root == "crate":
                target = names
            else:
                ups = 1
                while names and names[0] == "super":
                    ups, names = ups + 1, names[1:]
                target = here[: max(len(here) - ups, 0)] + names
            out.add((tuple(here), tuple(target)))
    return out


def cycles_at(edges_, depth: int, prefix: tuple):
    """Cycles among the children of `prefix`, one level down."""
    graph = {}
    for a, b in edges_:
        if a[: len(prefix)] != prefix or b[: len(prefix)] != prefix:
            continue
        if len(a) <= len(prefix) or len(b) <= len(prefix):
            continue
        x, y = a[len(prefix)], b[len(prefix)]
        if x != y:
            graph.setdefault(x, set()).add(y)
    found = []
    state = {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return [" -> ".join("::".join(prefix + (n,)) for n in c) for c in found]


def main() -> int:
    bad = []
    for crate in sys.argv[1:]:
        src = Path(crate) / "src"
        es = edges(src)
        prefixes = {()} | {a[:i] for a, _ in es for i in range(1, len(a))}
        for prefix in sorted(prefixes):
            for c in cycles_at(es, len(prefix), prefix):
                bad.append(f"{crate}: {c}")
    for line in bad:
        print("import circle:", line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
