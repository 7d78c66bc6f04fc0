//! Slurm's compressed host lists, as in `SLURM_JOB_NODELIST`:
//! `node[01-04,07],gpu1,rack[1-2]-n[1-2]`. Ranges keep their zero padding
//! (`[01-04]` is node01..node04), several bracket groups in one name
//! multiply out, and commas inside brackets do not split hosts.

use crate::{FleetError, HostListFlaw};

/// Most hosts one list may expand to: a big machine, not a runaway range.
pub const MAX_HOSTS: usize = 1 << 16;

fn bad(list: &str, flaw: HostListFlaw) -> FleetError {
    FleetError::HostList {
        list: list.into(),
        flaw,
    }
}

/// Every host of `list`, in order.
pub fn expand(list: &str) -> Result<Vec<String>, FleetError> {
    let mut hosts = Vec::new();
    for name in split_top(list)? {
        if name.is_empty() {
            continue;
        }
        let mut partial = vec![String::new()];
        let mut rest = name;
        while !rest.is_empty() {
            match rest.find('[') {
                None => {
                    partial.iter_mut().for_each(|p| p.push_str(rest));
                    rest = "";
                }
                Some(open) => {
                    let close = rest[open..]
                        .find(']')
                        .map(|c| open + c)
                        .ok_or_else(|| bad(list, HostListFlaw::Unclosed))?;
                    let literal = &rest[..open];
                    let values = range_values(list, &rest[open + 1..close])?;
                    if partial.len().saturating_mul(values.len()) > MAX_HOSTS {
                        return Err(bad(list, HostListFlaw::TooMany));
                    }
                    partial = partial
                        .iter()
                        .flat_map(|p| values.iter().map(move |v| format!("{p}{literal}{v}")))
                        .collect();
                    rest = &rest[close + 1..];
                }
            }
        }
        hosts.extend(partial);
        if hosts.len() > MAX_HOSTS {
            return Err(bad(list, HostListFlaw::TooMany));
        }
    }
    if hosts.is_empty() {
        return Err(bad(list, HostListFlaw::Empty));
    }
    Ok(hosts)
}

/// The names of a list: split at commas outside brackets.
fn split_top(list: &str) -> Result<Vec<&str>, FleetError> {
    let (mut names, mut depth, mut start) = (Vec::new(), 0u32, 0);
    for (i, c) in list.char_indices() {
        match c {
            '[' if depth == 0 => depth = 1,
            '[' => return Err(bad(list, HostListFlaw::Nested)),
            ']' if depth == 1 => depth = 0,
            ']' => return Err(bad(list, HostListFlaw::Unopened)),
            ',' if depth == 0 => {
                names.push(list[start..i].trim());
                start = i + 1;
            }
            c if c.is_whitespace() && depth > 0 => {
                return Err(bad(list, HostListFlaw::Space));
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(bad(list, HostListFlaw::Unclosed));
    }
    names.push(list[start..].trim());
    Ok(names)
}

/// The values of one bracket group, `01-04,07`, each as written (padded).
fn range_values(list: &str, group: &str) -> Result<Vec<String>, FleetError> {
    let mut out = Vec::new();
    for part in group.split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let digits =
            |s: &str| !s.is_empty() && s.len() <= 18 && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(lo) || !digits(hi) {
            return Err(bad(list, HostListFlaw::NotANumber(part.to_string())));
        }
        let (a, b): (u64, u64) = (lo.parse().unwrap_or(0), hi.parse().unwrap_or(0));
        if a > b {
            return Err(bad(list, HostListFlaw::Backwards(part.to_string())));
        }
        if b - a >= MAX_HOSTS as u64 || out.len() + (b - a) as usize >= MAX_HOSTS {
            return Err(bad(list, HostListFlaw::TooMany));
        }
        let width = lo.len();
        out.extend((a..=b).map(|n| format!("{n:0width$}")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hosts(list: &str) -> Vec<String> {
        expand(list).unwrap()
    }

    #[test]
    fn slurm_lists_expand_in_order_with_their_padding() {
        assert_eq!(hosts("node1"), ["node1"]);
        assert_eq!(
            hosts("node[01-03,07],gpu1"),
            ["node01", "node02", "node03", "node07", "gpu1"]
        );
        assert_eq!(hosts("r[1-2]-n[8-9]"), ["r1-n8", "r1-n9", "r2-n8", "r2-n9"]);
        assert_eq!(hosts("a[9-11]"), ["a9", "a10", "a11"]);
        assert_eq!(hosts("h[1-2].ib, h3"), ["h1.ib", "h2.ib", "h3"]);
    }

    #[test]
    fn broken_lists_are_refused_with_the_reason() {
        use HostListFlaw::*;
        for (list, why) in [
            ("node[1-3", Unclosed),
            ("node1-3]", Unopened),
            ("node[3-1]", Backwards("3-1".into())),
            ("node[a-b]", NotANumber("a-b".into())),
            ("node[[1]]", Nested),
            ("node[0-99999999]", TooMany),
            ("a[0-999],b[0-999]x[0-999]", TooMany),
            ("", Empty),
        ] {
            match expand(list) {
                Err(FleetError::HostList { list: l, flaw }) => {
                    assert_eq!((l.as_str(), flaw), (list, why));
                }
                other => panic!("{list}: {other:?}"),
            }
        }
    }

    proptest! {
        /// A list written from hosts numbered in a range expands back to them.
        #[test]
        fn a_written_range_expands_back(prefix in "[a-z]{1,6}", lo in 0u32..500, n in 1u32..40, width in 1usize..5) {
            let hi = lo + n - 1;
            let list = format!("{prefix}[{lo:0width$}-{hi:0width$}]");
            let want: Vec<String> = (lo..=hi).map(|i| format!("{prefix}{i:0width$}")).collect();
            prop_assert_eq!(expand(&list).unwrap(), want);
        }

        #[test]
        fn never_panics(list in ".{0,64}") {
            let _ = expand(&list);
        }
    }
}
