//! The page: runs at a glance, the figures, every verdict in words, and the
//! provenance of each input. Everything inline; nothing is fetched.

use std::fmt::Write as _;

use linerate_result::ResultDoc;

use crate::{Figure, Input, data, job_figures};

/// `s` made safe inside HTML text and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The pages' shared style sheet.
pub const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.9em;margin:.5em 0}td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:1.5em 0;padding:.5em;border:1px solid #e4e4e4}figure svg{width:100%;max-width:900px;height:auto;display:block}
figcaption{font-size:.85em;color:#444;margin-top:.4em}code{font-size:.9em;word-break:break-all}
details{margin:.5em 0}summary{cursor:pointer}.limit{font-weight:bold}";

fn gbit(bps: f64) -> String {
    format!("{:.2}", bps / 1e9)
}

fn limit(doc: &ResultDoc) -> String {
    serde_json::to_value(doc.summary.verdict.limit)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A table of contents: the page's sections and every figure by title.
fn contents(h: &mut String, figures: &[Figure]) {
    h.push_str("<nav id=\"contents\"><h2>Contents</h2><ul><li><a href=\"#runs\">Runs</a></li><li><a href=\"#figures\">Figures</a><ul>\n");
    for f in figures {
        let _ = writeln!(h, "<li><a href=\"#{}\">{}</a></li>", f.id, escape(&f.title));
    }
    h.push_str("</ul></li><li><a href=\"#verdicts\">Verdicts</a></li><li><a href=\"#provenance\">Provenance</a></li></ul></nav>\n");
}

/// One figure with its caption, as every page draws it.
pub fn figure(h: &mut String, f: &Figure) {
    let _ = writeln!(
        h,
        "<figure id=\"{}\" class=\"figure\" data-kind=\"{}\">\n{}\n<figcaption><b>{}</b>. {}</figcaption></figure>",
        f.id,
        f.kind.slug(),
        f.svg,
        escape(&f.title),
        escape(&f.caption)
    );
}

/// The whole page.
pub fn page(inputs: &[Input], figures: &[Figure], errors: &[String], generated: &str) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>linerate report</title><style>{STYLE}</style></head><body>\n<h1>linerate report</h1>\n<p>{} results, {} figures; generated {} by linerate {}.</p>\n",
        inputs.len(),
        figures.len(),
        escape(generated),
        env!("CARGO_PKG_VERSION")
    );
    contents(&mut h, figures);
    h.push_str("<h2 id=\"runs\">Runs</h2>\n<table><tr><th>result</th><th>kind</th><th>command</th><th>headline</th><th>limit</th></tr>\n");
    for i in inputs {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td class=\"headline\">{}</td><td class=\"limit\">{}</td></tr>",
            escape(&i.path),
            escape(&data::kind_of(&i.doc)),
            escape(&i.doc.command_line.join(" ")),
            escape(&data::headline(&i.doc)),
            escape(&limit(&i.doc))
        );
    }
    h.push_str("</table>\n");
    if let Some(findings) = findings_table(inputs) {
        h.push_str(&findings);
    }
    if let Some(pauses) = pause_table(inputs) {
        h.push_str(&pauses);
    }
    h.push_str("<h2 id=\"figures\">Figures</h2>\n");
    if figures.is_empty() {
        h.push_str(
            "<p>These results hold nothing to plot (no intervals, sweeps or comparisons).</p>\n",
        );
    }
    for f in figures {
        figure(&mut h, f);
    }
    for e in errors {
        let _ = writeln!(h, "<p>Not drawn: {}</p>", escape(e));
    }
    h.push_str("<h2 id=\"verdicts\">Verdicts</h2>\n<ul>\n");
    for r in data::runs(inputs) {
        let _ = writeln!(
            h,
            "<li><b>{}</b> ({}, <span class=\"limit\">{}</span>): {}</li>",
            escape(&r.label),
            escape(&data::headline(r.doc)),
            escape(&limit(r.doc)),
            escape(&r.doc.summary.verdict.sentence)
        );
    }
    h.push_str("</ul>\n<h2 id=\"provenance\">Provenance</h2>\n");
    for i in inputs {
        provenance(&mut h, i);
    }
    h.push_str("</body></html>\n");
    h
}

fn findings_table(inputs: &[Input]) -> Option<String> {
    let mut rows = String::new();
    for i in inputs {
        let Some(s) = &i.doc.study else { continue };
        let mut said = std::collections::BTreeSet::new();
        for (k, v) in &s.findings {
            let def = s
                .definitions
                .get(k)
                .or_else(|| s.definitions.get(k.split('/').next().unwrap_or(k)))
                .filter(|d| said.insert(d.as_str()))
                .map(|d| d.as_str())
                .or(Some("as above"));
            let _ = writeln!(
                rows,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                escape(&i.path),
                escape(k),
                if k.contains("bps") {
                    format!("{} Gbit/s", gbit(*v))
                } else if v.abs() >= 1e4 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.3}")
                },
                escape(def.unwrap_or(""))
            );
        }
    }
    (!rows.is_empty()).then(|| {
        format!("<h2 id=\"findings\">Findings</h2>\n<table><tr><th>result</th><th>finding</th><th class=\"num\">value</th><th>definition</th></tr>\n{rows}</table>\n")
    })
}

/// The interference study's pause durations, as the seed's Table II.
fn pause_table(inputs: &[Input]) -> Option<String> {
    let mut rows = String::new();
    for i in inputs {
        for r in job_figures::pause_rows(&i.doc) {
            let _ = writeln!(
                rows,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.1}</td><td class=\"num\">{:.1}</td></tr>",
                escape(&i.path),
                escape(&r.config),
                escape(&r.switch),
                r.received_us / 1000.0,
                r.sent_us / 1000.0
            );
        }
    }
    (!rows.is_empty()).then(|| {
        format!(
            "<h2 id=\"pauses\">Pause durations</h2>\n<p>Per switch, summed over its ports: how \
             long its ports were paused by their neighbours (received) and paused them (sent), as \
             the seed's Table II. Only configurations with a lossless class pause.</p>\n\
             <table id=\"pause-table\"><tr><th>result</th><th>configuration</th><th>switch</th>\
             <th class=\"num\">received, ms</th><th class=\"num\">sent, ms</th></tr>\n{rows}</table>\n"
        )
    })
}

fn provenance(h: &mut String, i: &Input) {
    let d = &i.doc;
    let c = &d.hosts.client;
    let _ = write!(
        h,
        "<details><summary>{}</summary><table>\
         <tr><th>linerate</th><td>{}</td></tr><tr><th>command</th><td><code>{}</code></td></tr>\
         <tr><th>kernel</th><td>{}</td></tr><tr><th>CPU</th><td>{} x {}</td></tr><tr><th>host</th><td>{}</td></tr>",
        escape(&i.path),
        escape(&d.linerate_version),
        escape(&d.command_line.join(" ")),
        escape(&c.kernel),
        escape(&c.cpu_model),
        c.cpus,
        escape(&c.hostname)
    );
    if let Some(s) = &d.hosts.server
        && (s.hostname != c.hostname || s.kernel != c.kernel)
    {
        let _ = write!(
            h,
            "<tr><th>server</th><td>{} ({})</td></tr>",
            escape(&s.hostname),
            escape(&s.kernel)
        );
    }
    let lab = d.lab.as_ref().or_else(|| {
        d.study
            .as_ref()
            .and_then(|s| s.points.first())
            .and_then(|p| p.result.lab.as_ref())
    });
    if let Some(l) = lab {
        let _ = write!(
            h,
            "<tr><th>lab</th><td>{} on backend {} ({}); {}, MTU {}; conditions <code>{}</code></td></tr>",
            escape(&l.name),
            escape(&l.backend),
            escape(&l.backend_reason),
            escape(&l.topology),
            l.mtu,
            escape(&l.conditions.to_string())
        );
    }
    if let Some(nic) = d.parameters.get("placement").and_then(|v| v.as_str()) {
        let _ = write!(h, "<tr><th>placement</th><td>{}</td></tr>", escape(nic));
    }
    let sysctls: Vec<String> = c
        .sysctls
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    let _ = writeln!(
        h,
        "<tr><th>sysctls</th><td><code>{}</code></td></tr><tr><th>parameters</th><td><code>{}</code></td></tr></table></details>",
        escape(&sysctls.join("; ")),
        escape(&d.parameters.to_string())
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_markup() {
        assert_eq!(
            super::escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
