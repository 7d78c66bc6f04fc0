//! A schedule file (TOML) as a plan of tests. Each `[[test]]` is a linerate
//! command line (bench, latency, mesh, or a send of generated data) to one
//! or more hosts, with an interval, a jitter, a time limit and the windows
//! it may run in:
//!
//! ```toml
//! name = "dtns"
//!
//! [[test]]
//! command = "bench {host}:5201 -t 10"
//! hosts = ["dtn2", "dtn3"]
//! every = "1h"
//! jitter = "5m"
//! limit = "2m"
//! windows = ["22:00-06:00"]
//! ```
//!
//! A test that is wrong (an unknown command, an interval of 0) is an error
//! naming its line, and the others still make the plan; a file that is
//! not TOML is one error naming the line where it stops being so.

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

/// The commands a schedule may run.
const COMMANDS: &[&str] = &["bench", "latency", "mesh", "send"];

/// Why a schedule file, or one test of it, cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The file is not TOML, or not a schedule's layout.
    #[error("line {line}: {why}")]
    Parse {
        /// Its line, from 1.
        line: usize,
        /// What the TOML reader said.
        why: String,
    },
    /// A test's command is not one a schedule runs.
    #[error(
        "line {line}: {command:?} is not a command a schedule runs (bench, latency, mesh, send)"
    )]
    UnknownCommand {
        /// The test's line.
        line: usize,
        /// Its first word.
        command: String,
    },
    /// A send that would send files: a schedule sends generated data only.
    #[error("line {line}: a scheduled send sends generated data: give --from-memory SIZE")]
    SendOfFiles {
        /// The test's line.
        line: usize,
    },
    /// A command line that does not split into words.
    #[error("line {line}: the command's quotes do not close")]
    Quotes {
        /// The test's line.
        line: usize,
    },
    /// `{host}` in the command without `hosts`, or `hosts` without it.
    #[error("line {line}: give hosts = [...] and {{host}} in the command together")]
    Hosts {
        /// The test's line.
        line: usize,
    },
    /// A span that does not parse, or is zero where it cannot be.
    #[error("line {line}: {field} = {given:?}: {why}")]
    Span {
        /// The field's line.
        line: usize,
        /// The field.
        field: &'static str,
        /// As given.
        given: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A window that is not `HH:MM-HH:MM`.
    #[error("line {line}: window {given:?}: give HH:MM-HH:MM (UTC)")]
    Window {
        /// The window's line.
        line: usize,
        /// As given.
        given: String,
    },
    /// Two tests of one name.
    #[error("line {line}: a second test named {name:?}")]
    NameTwice {
        /// The second one's line.
        line: usize,
        /// The name.
        name: String,
    },
}

/// What a test measures, for the rule that two throughput tests never
/// share a path at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestKind {
    /// Fills its path (bench, mesh, send): one at a time a path.
    Throughput,
    /// Light (latency): may run beside anything.
    Latency,
}

/// A time of day window, UTC, in minutes after midnight; `from > to` wraps
/// over midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Opens at.
    pub from: u32,
    /// Closes at.
    pub to: u32,
}

impl Window {
    /// Whether the minute of the day `minute` is inside.
    pub fn holds(&self, minute: u32) -> bool {
        if self.from <= self.to {
            (self.from..self.to).contains(&minute)
        } else {
            minute >= self.from || minute < self.to
        }
    }
}

/// One test of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct TestSpec {
    /// Its name, unique in the plan (results carry it).
    pub name: String,
    /// The linerate command line, without `linerate`.
    pub argv: Vec<String>,
    /// What it measures.
    pub kind: TestKind,
    /// The path it holds while it runs: its command's target host.
    pub path: String,
    /// How often.
    pub every: Duration,
    /// Each run starts up to this long after its time, at random.
    pub jitter: Duration,
    /// A run still going after this long is ended.
    pub limit: Duration,
    /// When it may start (any time when empty).
    pub windows: Vec<Window>,
    /// The line of its `[[test]]`.
    pub line: usize,
}

/// A schedule: its name and its tests.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The schedule's name (results carry it).
    pub name: String,
    /// Where results go, if the file says (`--archive`'s values).
    pub archive: Option<String>,
    /// The tests that can run.
    pub tests: Vec<TestSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    name: Option<String>,
    archive: Option<String>,
    #[serde(default)]
    test: Vec<Spanned<RawTest>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTest {
    name: Option<String>,
    command: Spanned<String>,
    #[serde(default)]
    hosts: Vec<String>,
    every: Spanned<String>,
    jitter: Option<Spanned<String>>,
    limit: Option<Spanned<String>>,
    #[serde(default)]
    windows: Vec<Spanned<String>>,
}

/// The line (from 1) of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |before| before.matches('\n').count() + 1)
}

/// Reads schedule file `text`: the plan of the tests that can run, and an
/// error for each that cannot (the file's stem names a plan without a
/// name). Only a file that is not a schedule at all is one error.
pub fn parse(text: &str, stem: &str) -> Result<(Plan, Vec<PlanError>), PlanError> {
    let raw: RawPlan = toml::from_str(text).map_err(|e| PlanError::Parse {
        line: e.span().map_or(1, |s| line_of(text, s.start)),
        why: e.message().to_string(),
    })?;
    let mut plan = Plan {
        name: raw.name.unwrap_or_else(|| stem.to_string()),
        archive: raw.archive,
        tests: Vec::new(),
    };
    let mut errors = Vec::new();
    for (i, spanned) in raw.test.into_iter().enumerate() {
        let line = line_of(text, spanned.span().start);
        match tests_of(spanned.into_inner(), i, line, text) {
            Ok(tests) => {
                for t in tests {
                    if plan.tests.iter().any(|p| p.name == t.name) {
                        errors.push(PlanError::NameTwice {
                            line: t.line,
                            name: t.name,
                        });
                    } else {
                        plan.tests.push(t);
                    }
                }
            }
            Err(e) => errors.push(e),
        }
    }
    Ok((plan, errors))
}

/// The tests one `[[test]]` makes: one, or one a host.
fn tests_of(
    raw: RawTest,
    index: usize,
    line: usize,
    text: &str,
) -> Result<Vec<TestSpec>, PlanError> {
    let at = |s: &std::ops::Range<usize>| line_of(text, s.start);
    let command_line = at(&raw.command.span());
    let argv =
        shlex::split(raw.command.get_ref()).ok_or(PlanError::Quotes { line: command_line })?;
    let command = argv.first().cloned().unwrap_or_default();
    if !COMMANDS.contains(&command.as_str()) {
        return Err(PlanError::UnknownCommand {
            line: command_line,
            command,
        });
    }
    if command == "send" && !argv.iter().any(|w| w == "--from-memory") {
        return Err(PlanError::SendOfFiles { line: command_line });
    }
    let templated = argv.iter().any(|w| w.contains("{host}"));
    if templated == raw.hosts.is_empty() {
        return Err(PlanError::Hosts { line });
    }
    let span = |field: &'static str, s: &Spanned<String>, zero_ok: bool| {
        let given = s.get_ref().clone();
        let line = at(&s.span());
        match humantime::parse_duration(&given) {
            Err(_) => Err(PlanError::Span {
                line,
                field,
                given,
                why: "give a span such as 30s, 5m or 1h",
            }),
            Ok(d) if d.is_zero() && !zero_ok => Err(PlanError::Span {
                line,
                field,
                given,
                why: "it cannot be 0",
            }),
            Ok(d) => Ok(d),
        }
    };
    let every = span("every", &raw.every, false)?;
    let jitter = raw
        .jitter
        .as_ref()
        .map(|j| span("jitter", j, true))
        .transpose()?
        .unwrap_or_default();
    if jitter >= every {
        return Err(PlanError::Span {
            line: raw.jitter.as_ref().map_or(line, |j| at(&j.span())),
            field: "jitter",
            given: raw.jitter.map(|j| j.into_inner()).unwrap_or_default(),
            why: "it must be shorter than every",
        });
    }
    let limit = match &raw.limit {
        None => every,
        Some(l) => {
            let d = span("limit", l, false)?;
            if d > every {
                return Err(PlanError::Span {
                    line: at(&l.span()),
                    field: "limit",
                    given: l.get_ref().clone(),
                    why: "a run must end before the next is due: at most every",
                });
            }
            d
        }
    };
    let windows = raw
        .windows
        .iter()
        .map(|w| {
            window(w.get_ref()).ok_or_else(|| PlanError::Window {
                line: at(&w.span()),
                given: w.get_ref().clone(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let kind = if command == "latency" {
        TestKind::Latency
    } else {
        TestKind::Throughput
    };
    let base = raw
        .name
        .unwrap_or_else(|| format!("{command}-{}", index + 1));
    let hosts: Vec<Option<&String>> = if raw.hosts.is_empty() {
        vec![None]
    } else {
        raw.hosts.iter().map(Some).collect()
    };
    Ok(hosts
        .into_iter()
        .map(|host| {
            let argv: Vec<String> = argv
                .iter()
                .map(|w| host.map_or_else(|| w.clone(), |h| w.replace("{host}", h)))
                .collect();
            TestSpec {
                name: host.map_or_else(|| base.clone(), |h| format!("{base}@{h}")),
                path: target(&argv),
                argv,
                kind,
                every,
                jitter,
                limit,
                windows: windows.clone(),
                line,
            }
        })
        .collect())
}

/// The host a command line is pointed at: its first word after the command
/// that is not a flag or a flag's value, without a port or a path.
fn target(argv: &[String]) -> String {
    // Flags of these commands that take a value.
    const VALUED: &[&str] = &[
        "-t",
        "-P",
        "-l",
        "-w",
        "-b",
        "--time",
        "--parallel",
        "--len",
        "--window",
        "--rate",
        "--cc",
        "--from-memory",
        "--json",
        "--archive",
        "--lab",
        "--agents",
        "--local",
        "-p",
        "--port",
    ];
    let mut words = argv.iter().skip(1);
    while let Some(w) = words.next() {
        if VALUED.contains(&w.as_str()) {
            words.next();
        } else if !w.starts_with('-') {
            let host = w.split(":/").next().unwrap_or(w);
            return match host.rsplit_once(':') {
                // An IPv6 address in brackets, or HOST:PORT.
                Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => {
                    h.trim_matches(['[', ']']).to_string()
                }
                _ => host.to_string(),
            };
        }
    }
    argv.join(" ")
}

/// `HH:MM-HH:MM` as a window.
fn window(given: &str) -> Option<Window> {
    let minute = |hm: &str| {
        let (h, m) = hm.trim().split_once(':')?;
        let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
        (h < 24 && m < 60).then_some(h * 60 + m)
    };
    let (from, to) = given.split_once('-')?;
    let (from, to) = (minute(from)?, minute(to)?);
    (from != to).then_some(Window { from, to })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"name = "dtns"

[[test]]
command = "bench {host}:5201 -t 10"
hosts = ["dtn2", "dtn3"]
every = "1h"
jitter = "5m"
limit = "2m"
windows = ["22:00-06:00"]

[[test]]
name = "rtt"
command = "latency dtn2 -t 5"
every = "10m"
"#;

    #[test]
    fn a_test_for_each_host_with_its_path_and_spans() {
        let (plan, errors) = parse(GOOD, "file").unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(plan.name, "dtns");
        let names: Vec<&str> = plan.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["bench-1@dtn2", "bench-1@dtn3", "rtt"]);
        let b = &plan.tests[1];
        assert_eq!(b.argv, ["bench", "dtn3:5201", "-t", "10"]);
        assert_eq!((b.path.as_str(), b.kind), ("dtn3", TestKind::Throughput));
        assert_eq!(b.every, Duration::from_secs(3600));
        assert_eq!(b.jitter, Duration::from_secs(300));
        assert_eq!(b.limit, Duration::from_secs(120));
        assert_eq!(
            b.windows,
            [Window {
                from: 22 * 60,
                to: 6 * 60
            }]
        );
        assert_eq!(b.line, 3);
        let r = &plan.tests[2];
        assert_eq!((r.kind, r.limit, r.line), (TestKind::Latency, r.every, 11));
    }

    #[test]
    fn a_wrong_test_names_its_line_and_the_others_stay() {
        let text = r#"
[[test]]
command = "tune audit"
every = "1h"

[[test]]
command = "bench dtn2"
every = "0s"

[[test]]
command = "bench dtn2"
every = "5m"
windows = ["25:00-01:00"]

[[test]]
command = "send /etc dtn2:/x"
every = "5m"

[[test]]
command = "latency dtn2"
every = "1m"
"#;
        let (plan, errors) = parse(text, "watch").unwrap();
        assert_eq!(plan.name, "watch");
        assert_eq!(plan.tests.len(), 1);
        assert_eq!(plan.tests[0].name, "latency-5");
        let said: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert!(
            said[0].starts_with("line 3: \"tune\" is not a command"),
            "{said:?}"
        );
        assert_eq!(said[1], "line 8: every = \"0s\": it cannot be 0");
        assert!(
            said[2].starts_with("line 13: window \"25:00-01:00\""),
            "{said:?}"
        );
        assert!(said[3].starts_with("line 16: a scheduled send"), "{said:?}");
    }

    #[test]
    fn a_file_that_is_not_a_schedule_names_its_line() {
        let e = parse("name = \"x\"\n[[test]\ncommand = 1\n", "x").unwrap_err();
        assert!(matches!(e, PlanError::Parse { line: 2, .. }), "{e}");
        let e = parse(
            "[[test]]\ncommand = \"bench x\"\nevery = \"1m\"\nevry = 2\n",
            "x",
        )
        .unwrap_err();
        assert!(matches!(e, PlanError::Parse { line: 1 | 4, .. }), "{e}");
    }

    #[test]
    fn windows_wrap_over_midnight() {
        let w = window("22:00-06:00").unwrap();
        assert!(w.holds(23 * 60) && w.holds(0) && w.holds(5 * 60 + 59));
        assert!(!w.holds(6 * 60) && !w.holds(12 * 60));
        let day = window("08:30-17:00").unwrap();
        assert!(day.holds(8 * 60 + 30) && !day.holds(17 * 60));
        assert!(window("10:00-10:00").is_none());
    }

    #[test]
    fn the_target_skips_flags_and_their_values() {
        let argv = |s: &str| shlex::split(s).unwrap();
        assert_eq!(target(&argv("bench -t 10 dtn2:5201 -P 4")), "dtn2");
        assert_eq!(target(&argv("send --from-memory 1G dtn3:/in")), "dtn3");
        assert_eq!(target(&argv("latency [fd00::2]:5201")), "fd00::2");
        assert_eq!(target(&argv("bench dtn4")), "dtn4");
    }
}
