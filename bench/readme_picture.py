#!/usr/bin/env python3
"""The README's picture, made from the demo as the README runs it: runs
`linerate demo` in a scratch folder, refuses if any artefact holds a URL's
token, screenshots its report's title and first two figures in headless Chromium into
docs/report.png and writes the report's layout (sections, figures in order,
how many results) to docs/report.layout.json, which the demo test compares
with the report the demo makes now (crates/cli/tests/end_to_end/demo.rs).

  bench/readme_picture.py                  # uses target/release/linerate
  bench/readme_picture.py --linerate PATH
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def layout(html, stdout):
    """What the picture shows of a report, figures aside: its sections,
    its figures' kinds in order and how many results it drew from."""
    counted = re.search(r"\((\d+) figures from (\d+) results\)", stdout)
    return {
        "sections": re.findall(r'<h2 id="([^"]+)"', html),
        "figures": re.findall(r'<figure [^>]*data-kind="([^"]+)"', html),
        "results": int(counted.group(2)) if counted else None,
    }


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return name
    sys.exit("no chromium: apt install chromium")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linerate", default=os.path.join(ROOT, "target/release/linerate"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="linerate-readme-") as work:
        demo = subprocess.run([a.linerate, "demo"], cwd=work, capture_output=True, text=True, timeout=600)
        if demo.returncode != 0:
            sys.exit(f"linerate demo failed:\n{demo.stdout}\n{demo.stderr}")
        out = os.path.join(work, "linerate-demo")
        for base, _, names in os.walk(out):
            for name in names:
                with open(os.path.join(base, name), "rb") as f:
                    if b"token=" in f.read():
                        sys.exit(f"{name} holds a URL's token: not drawing a picture of it")
        report = os.path.join(out, "report.html")
        with open(report) as f:
            html = f.read()
        # The page's own head and title line, then its first two figures
        # (the peers side by side, throughput against streams): what the
        # README shows of it.
        head = html.split("<nav", 1)[0]
        figures = re.findall(r"<figure .*?</figure>", html, re.S)[:2]
        top = os.path.join(work, "top.html")
        with open(top, "w") as f:
            f.write(head + "\n".join(figures) + "</body></html>")
        picture = os.path.join(ROOT, "docs/report.png")
        shot = subprocess.run(
            [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--window-size=900,1250", f"--screenshot={picture}", f"file://{top}"],
            capture_output=True, text=True, timeout=120,
        )
        if shot.returncode != 0 or not os.path.exists(picture):
            sys.exit(f"chromium made no screenshot:\n{shot.stderr}")
        with open(os.path.join(ROOT, "docs/report.layout.json"), "w") as f:
            json.dump(layout(html, demo.stdout), f, indent=1)
            f.write("\n")
    print("docs/report.png and docs/report.layout.json written")


if __name__ == "__main__":
    main()
