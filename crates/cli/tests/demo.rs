//! The README's first command: `linerate demo` on loopback, no root, under
//! a minute, and a report that opens in headless Chromium with every figure
//! present and drawn.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{assert_drawn, figures};

fn chromium() -> Option<&'static str> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if found.is_none() && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("chromium is not installed; .ci/run installs it");
    }
    found
}

#[test]
fn demo_report_opens_in_chromium_with_every_figure_drawn() {
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
    assert!(took < Duration::from_secs(60), "demo took {took:?}");
    let report = dir.join("linerate-demo/report.html");
    assert!(
        stdout.contains("report: linerate-demo/report.html"),
        "{stdout}"
    );
    assert!(stdout.contains("verified end to end"), "{stdout}");
    let written = std::fs::read_to_string(&report).unwrap();
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

    let Some(browser) = chromium() else {
        eprintln!("skipping the browser part: no chromium");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    };
    let url = format!("file://{}", report.display());
    let headless = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
    ];
    let dom = Command::new(browser)
        .args(headless)
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
    let shot = dir.join("report.png");
    let s = Command::new(browser)
        .args(headless)
        .arg("--window-size=1100,3000")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // A blank page of this size compresses to a few KiB; figures do not.
    assert!(png.len() > 50_000, "screenshot only {} bytes", png.len());
    let _ = std::fs::remove_dir_all(&dir);
}
