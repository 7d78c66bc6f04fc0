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

use globset::{GlobBuilder, GlobMatcher};

/// A pattern rsync would not take, in the words of the flag that gave it.
#[derive(Debug, thiserror::Error)]
#[error("pattern {pattern:?}: {why}")]
pub struct FilterError {
    /// The pattern as given.
    pub pattern: String,
    /// What is wrong with it.
    pub why: String,
}

struct Pattern {
    /// As given.
    text: String,
    globs: Vec<GlobMatcher>,
    anchored: bool,
    dir_only: bool,
    whole_path: bool,
}

impl Pattern {
    fn new(text: &str) -> Result<Pattern, FilterError> {
        let err = |why: String| FilterError {
            pattern: text.to_string(),
            why,
        };
        if text.is_empty() {
            return Err(err("empty".into()));
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
        let whole_path = anchored || p.contains('/') || p.contains("**");
        let globs = globs
            .iter()
            .map(|g| {
                // rsync has no {a,b} alternates: braces are themselves.
                let g = g.replace('{', "\\{").replace('}', "\\}");
                GlobBuilder::new(&g)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .map(|g| g.compile_matcher())
                    .map_err(|e| err(e.kind().to_string()))
            })
            .collect::<Result<_, _>>()?;
        Ok(Pattern {
            text: text.to_string(),
            globs,
            anchored,
            dir_only,
            whole_path,
        })
    }

    fn matches(&self, path: &str, is_dir: bool) -> bool {
        if self.dir_only && !is_dir {
            return false;
        }
        let hit = |candidate: &str| self.globs.iter().any(|g| g.is_match(candidate));
        if !self.whole_path {
            return hit(path.rsplit('/').next().unwrap_or(path));
        }
        if self.anchored {
            return hit(path);
        }
        // The end of the path: the whole of it, or after any '/'.
        hit(path)
            || path
                .char_indices()
                .filter(|&(_, c)| c == '/')
                .any(|(i, _)| hit(&path[i + 1..]))
    }
}

/// The rules, in the order given.
#[derive(Default)]
pub struct Filter {
    rules: Vec<(bool, Pattern)>,
}

impl Filter {
    /// Paths matching `pattern` are sent, unless an earlier rule matched.
    pub fn include(&mut self, pattern: &str) -> Result<(), FilterError> {
        self.rules.push((true, Pattern::new(pattern)?));
        Ok(())
    }

    /// Paths matching `pattern` are left out, unless an earlier rule matched.
    pub fn exclude(&mut self, pattern: &str) -> Result<(), FilterError> {
        self.rules.push((false, Pattern::new(pattern)?));
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
    /// the source's own name first) is left out.
    pub fn excludes(&self, path: &str, is_dir: bool) -> bool {
        self.rules
            .iter()
            .find(|(_, p)| p.matches(path, is_dir))
            .is_some_and(|(include, _)| !include)
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
}
