//! Which source paths a transfer leaves out, by rsync's include/exclude
//! rules (`--exclude`, `--include`, `--exclude-from`), so that people's
//! existing filters mean the same here: the first rule that matches a path
//! decides; a path no rule matches is sent; an excluded directory is not
//! walked into.
//!
//! A pattern is matched as rsync matches it: a leading `/` anchors it at
//! the top of the transfer (the sources' own names); a trailing `/` makes
//! it match directories only; one with a `/` or `**` inside is matched
//! against the end of the path, component by component, one without
//! against the last component; `*` stops at `/`, `**` does not, `?` is one
//! character but `/`; `dir/***` is `dir` and everything in it.

use std::sync::OnceLock;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// Most wildcards one rule may have: each is a loop of the compiled
/// matcher, and a thousand rules of a hundred stars each took 327 MiB to
/// refuse (docs/security.md#filter-rules).
pub const MAX_WILDCARDS: usize = 24;

/// A pattern rsync would not take, in the words of the flag that gave it.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// One pattern that cannot be a rule.
    #[error("pattern {pattern:?}: {flaw}")]
    Pattern {
        /// The pattern as given (its first 64 characters when too long).
        pattern: String,
        /// What is wrong with it.
        flaw: PatternFlaw,
    },
    /// Rules that compile apart but not together.
    #[error(
        "all {rules} rules together: they do not compile within the matcher's bounds ({error}); \
         give fewer or simpler rules"
    )]
    TooComplex {
        /// How many rules there are.
        rules: usize,
        /// The matcher's error.
        error: globset::Error,
    },
}

/// What is wrong with one filter pattern.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PatternFlaw {
    /// No pattern at all.
    #[error("empty")]
    Empty,
    /// More wildcards than a rule may have.
    #[error("{0} wildcards ('*', '?', '['), more than the {MAX_WILDCARDS} a rule may have")]
    Wildcards(usize),
    /// A glob that does not parse.
    #[error("{0}")]
    Glob(globset::ErrorKind),
    /// More rules than a transfer may have.
    #[error("more than {MAX_RULES} rules")]
    TooManyRules,
    /// More pattern bytes than a transfer may have.
    #[error("the rules pass {} KiB of patterns together", MAX_PATTERN_BYTES >> 10)]
    TooManyBytes,
}

/// What part of a path a pattern is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Against {
    /// The last component: a pattern without a '/' or '**'.
    Name,
    /// The whole path: a pattern anchored with a leading '/'.
    Whole,
    /// The whole path or its end after any '/'.
    End,
}

struct Pattern {
    /// As given.
    text: String,
    /// Parsed, not compiled: the rules compile once, together.
    globs: Vec<Glob>,
    against: Against,
    dir_only: bool,
}

impl Pattern {
    fn new(text: &str) -> Result<Pattern, FilterError> {
        let err = |flaw| FilterError::Pattern {
            pattern: text.to_string(),
            flaw,
        };
        if text.is_empty() {
            return Err(err(PatternFlaw::Empty));
        }
        let wildcards = text
            .chars()
            .filter(|c| matches!(c, '*' | '?' | '['))
            .count();
        if wildcards > MAX_WILDCARDS {
            return Err(err(PatternFlaw::Wildcards(wildcards)));
        }
        let mut p = text;
        let anchored = p.starts_with('/');
        p = p.trim_start_matches('/');
        let mut globs = Vec::new();
        let mut dir_only = false;
        if let Some(dir) = p.strip_suffix("/***") {
            // The directory itself, and all it holds.
            globs.push(dir.to_string());
            globs.push(format!("{dir}/**"));
        } else {
            if let Some(d) = p.strip_suffix('/') {
                dir_only = true;
                p = d;
            }
            globs.push(p.to_string());
        }
        let against = if anchored {
            Against::Whole
        } else if p.contains('/') || p.contains("**") {
            Against::End
        } else {
            Against::Name
        };
        let globs = globs
            .iter()
            .map(|g| {
                // rsync has no {a,b} alternates: braces are themselves.
                let g = g.replace('{', "\\{").replace('}', "\\}");
                GlobBuilder::new(&g)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .map_err(|e| err(PatternFlaw::Glob(e.kind().clone())))
            })
            .collect::<Result<_, _>>()?;
        Ok(Pattern {
            text: text.to_string(),
            globs,
            against,
            dir_only,
        })
    }
}

/// The globs matched against one part of a path, compiled as one set, and
/// the rule each belongs to.
struct RuleSet {
    set: GlobSet,
    rule_of: Vec<usize>,
}

impl RuleSet {
    fn build(rules: &[(bool, Pattern)], against: Against) -> Result<RuleSet, FilterError> {
        let mut set = GlobSetBuilder::new();
        let mut rule_of = Vec::new();
        for (i, (_, p)) in rules.iter().enumerate() {
            if p.against == against {
                for g in &p.globs {
                    set.add(g.clone());
                    rule_of.push(i);
                }
            }
        }
        let set = set.build().map_err(|error| FilterError::TooComplex {
            rules: rules.len(),
            error,
        })?;
        Ok(RuleSet { set, rule_of })
    }

    /// The rules whose globs match `candidate`, into `hits`.
    fn hits(&self, candidate: &str, scratch: &mut Vec<usize>, hits: &mut Vec<usize>) {
        self.set.matches_into(candidate, scratch);
        hits.extend(scratch.iter().map(|&g| self.rule_of[g]));
    }
}

/// Every rule compiled: one set for each part of a path a rule looks at.
struct Compiled {
    name: RuleSet,
    whole: RuleSet,
    end: RuleSet,
}

/// Most rules a filter takes, as the wire does (`MAX_FILTER_RULES`).
pub const MAX_RULES: usize = linerate_wire::MAX_FILTER_RULES;
/// Most bytes of patterns a filter takes, all rules together
/// (`MAX_FILTER_BYTES`): what is matched against every path stays small.
pub const MAX_PATTERN_BYTES: usize = linerate_wire::MAX_FILTER_BYTES;

/// The rules, in the order given, compiled together the first time a path
/// is matched (or at [`Filter::compile`]).
#[derive(Default)]
pub struct Filter {
    rules: Vec<(bool, Pattern)>,
    bytes: usize,
    compiled: OnceLock<Result<Compiled, FilterError>>,
}

impl Filter {
    /// Paths matching `pattern` are sent, unless an earlier rule matched.
    pub fn include(&mut self, pattern: &str) -> Result<(), FilterError> {
        self.add(true, pattern)
    }

    /// Paths matching `pattern` are left out, unless an earlier rule matched.
    pub fn exclude(&mut self, pattern: &str) -> Result<(), FilterError> {
        self.add(false, pattern)
    }

    fn add(&mut self, include: bool, pattern: &str) -> Result<(), FilterError> {
        let too_many = |flaw| FilterError::Pattern {
            pattern: pattern.chars().take(64).collect(),
            flaw,
        };
        if self.rules.len() >= MAX_RULES {
            return Err(too_many(PatternFlaw::TooManyRules));
        }
        if self.bytes + pattern.len() > MAX_PATTERN_BYTES {
            return Err(too_many(PatternFlaw::TooManyBytes));
        }
        self.rules.push((include, Pattern::new(pattern)?));
        self.bytes += pattern.len();
        self.compiled = OnceLock::new();
        Ok(())
    }

    /// The lines of an `--exclude-from` file, as rsync reads them: blank
    /// lines and lines starting with `;` or `#` are skipped; `+ PATTERN`
    /// includes, `- PATTERN` excludes, any other line excludes.
    pub fn add_lines(&mut self, text: &str) -> Result<(), FilterError> {
        for line in text.lines() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.starts_with(';') || line.starts_with('#') {
                continue;
            }
            match (line.strip_prefix("+ "), line.strip_prefix("- ")) {
                (Some(p), _) => self.include(p)?,
                (_, Some(p)) => self.exclude(p)?,
                _ => self.exclude(line)?,
            }
        }
        Ok(())
    }

    /// Compiles the rules now, so that a set too large to match is refused
    /// before any path is.
    pub fn compile(&self) -> Result<(), FilterError> {
        self.compiled().map(|_| ())
    }

    fn compiled(&self) -> Result<&Compiled, FilterError> {
        self.compiled
            .get_or_init(|| {
                Ok(Compiled {
                    name: RuleSet::build(&self.rules, Against::Name)?,
                    whole: RuleSet::build(&self.rules, Against::Whole)?,
                    end: RuleSet::build(&self.rules, Against::End)?,
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The rules as `+ PATTERN` and `- PATTERN` lines, in order: what
    /// [`Filter::add_lines`] reads back to the same filter.
    pub fn lines(&self) -> Vec<String> {
        self.rules
            .iter()
            .map(|(include, p)| format!("{} {}", if *include { '+' } else { '-' }, p.text))
            .collect()
    }

    /// Whether there are no rules: every path is sent.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether `path` (relative to the top of the transfer, '/'-separated,
    /// the source's own name first) is left out. Rules that do not compile
    /// ([`Filter::compile`] says why) leave nothing out.
    pub fn excludes(&self, path: &str, is_dir: bool) -> bool {
        if self.rules.is_empty() {
            return false;
        }
        let Ok(c) = self.compiled() else {
            return false;
        };
        let (mut scratch, mut hits) = (Vec::new(), Vec::new());
        c.name.hits(
            path.rsplit('/').next().unwrap_or(path),
            &mut scratch,
            &mut hits,
        );
        c.whole.hits(path, &mut scratch, &mut hits);
        // The end of the path: the whole of it, or after any '/'.
        c.end.hits(path, &mut scratch, &mut hits);
        for (i, _) in path.char_indices().filter(|&(_, ch)| ch == '/') {
            c.end.hits(&path[i + 1..], &mut scratch, &mut hits);
        }
        hits.into_iter()
            .filter(|&r| is_dir || !self.rules[r].1.dir_only)
            .min()
            .is_some_and(|r| !self.rules[r].0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(rules: &[(&str, &str)]) -> Filter {
        let mut f = Filter::default();
        for (kind, p) in rules {
            match *kind {
                "+" => f.include(p).unwrap(),
                _ => f.exclude(p).unwrap(),
            }
        }
        f
    }

    /// rsync's own examples from its manual, as paths relative to the top.
    #[test]
    fn patterns_match_as_rsync_matches_them() {
        let f = filter(&[("-", "*.o")]);
        assert!(f.excludes("t/a/x.o", false));
        assert!(!f.excludes("t/a/x.c", false));
        // Anchored at the top of the transfer.
        let f = filter(&[("-", "/t/foo")]);
        assert!(f.excludes("t/foo", false));
        assert!(!f.excludes("t/a/t/foo", false));
        // Directories only.
        let f = filter(&[("-", "cache/")]);
        assert!(f.excludes("t/a/cache", true));
        assert!(!f.excludes("t/a/cache", false));
        // A slash inside: matched against the end of the path.
        let f = filter(&[("-", "a/*.log")]);
        assert!(f.excludes("t/a/x.log", false));
        assert!(f.excludes("t/b/a/x.log", false));
        assert!(!f.excludes("t/a/b/x.log", false));
        // ** crosses directories.
        let f = filter(&[("-", "t/**/x.log")]);
        assert!(f.excludes("t/a/b/x.log", false));
        // dir/*** is the directory and all it holds.
        let f = filter(&[("-", "t/keep/***")]);
        assert!(f.excludes("t/keep", true));
        assert!(f.excludes("t/keep/a/b", false));
        // The first match decides.
        let f = filter(&[("+", "important.o"), ("-", "*.o")]);
        assert!(!f.excludes("t/important.o", false));
        assert!(f.excludes("t/other.o", false));
        // Braces are literal.
        let f = filter(&[("-", "{a,b}")]);
        assert!(f.excludes("t/{a,b}", false));
        assert!(!f.excludes("t/a", false));
    }

    #[test]
    fn exclude_from_lines_take_comments_and_prefixes() {
        let mut f = Filter::default();
        f.add_lines("# comment\n; also\n\n+ keep.tmp\n- *.tmp\n*.bak\n")
            .unwrap();
        assert!(!f.excludes("t/keep.tmp", false));
        assert!(f.excludes("t/x.tmp", false));
        assert!(f.excludes("t/x.bak", false));
        assert!(!f.excludes("t/x.c", false));
    }

    #[test]
    fn rules_travel_as_lines_and_read_back_the_same() {
        let f = filter(&[("+", "keep.o"), ("-", "*.o"), ("-", "cache/")]);
        let lines = f.lines();
        assert_eq!(lines, ["+ keep.o", "- *.o", "- cache/"]);
        let mut back = Filter::default();
        back.add_lines(&lines.join("\n")).unwrap();
        for (path, dir) in [
            ("t/keep.o", false),
            ("t/a.o", false),
            ("t/cache", true),
            ("t/c", false),
        ] {
            assert_eq!(back.excludes(path, dir), f.excludes(path, dir), "{path}");
        }
    }

    #[test]
    fn a_bad_pattern_is_named() {
        let e = Filter::default().exclude("[z-a").unwrap_err();
        assert!(e.to_string().contains("[z-a"), "{e}");
        assert!(Filter::default().exclude("").is_err());
    }

    /// The rules matched one pattern at a time, each compiled alone (how
    /// they were matched before they compiled together): the oracle.
    fn one_at_a_time(rules: &[(bool, &str)], path: &str, is_dir: bool) -> bool {
        let mut hit = None;
        for (include, text) in rules {
            let p = Pattern::new(text).unwrap();
            if p.dir_only && !is_dir {
                continue;
            }
            let m: Vec<_> = p.globs.iter().map(|g| g.compile_matcher()).collect();
            let any = |c: &str| m.iter().any(|g| g.is_match(c));
            let matched = match p.against {
                Against::Name => any(path.rsplit('/').next().unwrap_or(path)),
                Against::Whole => any(path),
                Against::End => {
                    any(path)
                        || path
                            .char_indices()
                            .filter(|&(_, c)| c == '/')
                            .any(|(i, _)| any(&path[i + 1..]))
                }
            };
            if matched {
                hit = Some(*include);
                break;
            }
        }
        hit.is_some_and(|include| !include)
    }

    proptest::proptest! {
        /// Compiled together, the rules decide every path as each rule
        /// alone, first match first, does.
        #[test]
        fn rules_compiled_together_decide_as_one_at_a_time(
            rules in proptest::collection::vec(
                (proptest::bool::ANY, proptest::sample::select(vec![
                    "*.o", "a", "/t/a", "a/", "b/*.c", "t/**/x", "t/a/***", "?", "x*", "**/b",
                    "/t/*/", "{a,b}", "[ab]", "c/a", "*", "t",
                ])),
                0..8,
            ),
            path in proptest::collection::vec(
                proptest::sample::select(vec!["a", "b", "x.o", "c", "t", "x", "{a,b}", "b.c"]),
                1..5,
            ),
            is_dir in proptest::bool::ANY,
        ) {
            let mut f = Filter::default();
            for (include, text) in &rules {
                if *include { f.include(text).unwrap() } else { f.exclude(text).unwrap() }
            }
            let path = format!("t/{}", path.join("/"));
            proptest::prop_assert_eq!(
                f.excludes(&path, is_dir),
                one_at_a_time(&rules, &path, is_dir),
                "{:?} on {}", rules, path
            );
        }
    }

    #[test]
    fn rules_past_their_number_or_bytes_are_refused_by_name() {
        let mut f = Filter::default();
        let long = format!("*{}", "a".repeat(4095));
        let mut refused = None;
        for i in 0..MAX_RULES {
            if let Err(e) = f.exclude(&long) {
                refused = Some((i, e));
                break;
            }
        }
        let (taken, e) = refused.expect("1 MiB of patterns is the most");
        assert_eq!(taken, MAX_PATTERN_BYTES / 4096, "{e}");
        assert!(e.to_string().contains("KiB of patterns"), "{e}");
        let mut f = Filter::default();
        for _ in 0..MAX_RULES {
            f.exclude("x").unwrap();
        }
        let e = f.exclude("x").unwrap_err();
        assert!(e.to_string().contains("more than 10000 rules"), "{e}");
    }

    #[test]
    fn a_thousand_pathological_globs_compile_once_or_are_refused() {
        let mut f = Filter::default();
        // Stars between every letter: past the wildcards a rule may have.
        let glob: String = (0..340)
            .map(|j| if j % 2 == 0 { "*" } else { "a" })
            .collect();
        let e = f.exclude(&glob).unwrap_err();
        assert!(e.to_string().contains("more than the 24"), "{e}");
        for i in 0..1000 {
            // As many as a rule may have, each glob's regex backtracking
            // where a naive matcher would; ~1 KiB each.
            let glob: String = (0..2 * MAX_WILDCARDS)
                .map(|j| {
                    if j % 2 == 0 {
                        "*"
                    } else {
                        "aaaaaaaaaaaaaaaaaaaa"
                    }
                })
                .collect();
            f.exclude(&format!("{glob}{i}")).unwrap();
        }
        let at = std::time::Instant::now();
        match f.compile() {
            Ok(()) => {
                let path = format!("t/{}", "a".repeat(200));
                assert!(!f.excludes(&path, false));
            }
            Err(e) => assert!(e.to_string().contains("give fewer or simpler rules"), "{e}"),
        }
        eprintln!("1000 pathological globs: {:?}", at.elapsed());
    }
}
