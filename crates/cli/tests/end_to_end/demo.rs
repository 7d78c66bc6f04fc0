//! The README's first command: `linerate demo` on loopback, no root, under
//! a minute, and a report that opens in headless Chromium with every figure
//! present and drawn.

use crate::common;

use std::process::Command;
use std::time::Instant;

use common::{assert_drawn, figures};

#[test]
fn demo_report_opens_in_chromium_with_every_figure_drawn() {
    let _traffic = common::beside_other_traffic();
    let dir = std::env::temp_dir().join(format!("lr-demo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let t = Instant::now();
    // As the README runs it: no arguments, in the current folder.
    let out = common::linerate_cmd()
        .arg("demo")
        .current_dir(&dir)
        .output()
        .unwrap();
    let took = t.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "demo failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    // How long it took is the README's figure, measured in bench/, not here.
    eprintln!("demo took {took:?}");
    let report = dir.join("linerate-demo/report.html");
    assert!(
        stdout.contains("report: linerate-demo/report.html"),
        "{stdout}"
    );
    assert!(stdout.contains("verified end to end"), "{stdout}");
    // The demo passes its transfer's URL by a file: no warning about a
    // token on a command line, and no token in anything it leaves.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("token was on the command line"),
        "{stderr}"
    );
    for entry in walk(&dir.join("linerate-demo")) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("token="),
            "{} holds a URL's token",
            entry.display()
        );
    }
    let written = std::fs::read_to_string(&report).unwrap();
    // Its runs went over loopback, and the legends say so.
    assert!(
        !written.contains("unknown path"),
        "a demo run's path is unknown"
    );
    let expected = figures(&written);
    let kinds: Vec<&str> = expected.iter().map(|f| f.0.as_str()).collect();
    for want in [
        "over-time",
        "tcp-info",
        "vs-streams",
        "vs-message-size",
        "latency-vs-size",
        "tools",
    ] {
        assert!(
            kinds.contains(&want),
            "the demo report has no {want} figure: {kinds:?}"
        );
    }

    // The README's picture was made from a report of this layout
    // (bench/readme_picture.py writes both): sections, figures in order,
    // results. A report that changed shape needs a new picture.
    let layout = serde_json::json!({
        "sections": written
            .split("<h2 id=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .collect::<Vec<_>>(),
        "figures": kinds,
        "results": stdout
            .split(" figures from ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse::<u64>().ok()),
    });
    let pictured: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/report.layout.json"
        ))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        layout, pictured,
        "the README's picture (docs/report.png) shows another layout: run bench/readme_picture.py"
    );
    // The peers' bars say linerate ran there unpinned and blocking,
    // unlike the demo's own bench runs beside them.
    let tools = &expected.iter().find(|f| f.0 == "tools").unwrap().1;
    assert!(
        tools.contains("receivers blocking (--rx-poll off)"),
        "{tools}"
    );

    let Some(browser) = common::chromium() else {
        eprintln!("skipping the browser part: no chromium");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    };
    let url = format!("file://{}", report.display());
    let dom = Command::new(browser)
        .args(common::HEADLESS)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom = String::from_utf8_lossy(&dom.stdout).into_owned();
    let shown = figures(&dom);
    assert_eq!(
        shown.len(),
        expected.len(),
        "Chromium sees a different number of figures"
    );
    for (kind, body) in &shown {
        assert_drawn(kind, body);
    }
    common::screenshot(browser, &report, "demo-report.png");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
