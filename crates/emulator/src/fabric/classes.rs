//! Traffic classes of a fabric's ports: which DSCP goes where, how each
//! class is scheduled (strict priority or ETS weights, as 802.1Qaz), and
//! which classes are lossless (PFC).

use std::fmt;
use std::str::FromStr;

use linerate_wire::Dscp;

use super::FabricSpecError;
use serde::{Deserialize, Serialize};

/// The most classes a port has (802.1p has eight priorities).
pub const MAX_CLASSES: usize = 8;

/// How a port chooses between its classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Scheduling {
    /// Served before every ETS class whenever it has a packet; among strict
    /// classes the one listed first goes first.
    Strict,
    /// Shares what the strict classes leave by its weight (per cent), by
    /// deficit round robin.
    Ets {
        /// Its share in per cent; the ETS classes' weights add up to 100.
        weight: u32,
    },
}

/// One traffic class, as `--class NAME:dscp=LIST:strict|ets=W[:lossless]` gives it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrafficClass {
    /// Its name in flags, counters and figures.
    pub name: String,
    /// The DSCP code points it takes; empty takes every code point no
    /// other class names (`dscp=*`).
    pub dscp: Vec<u8>,
    /// How it is scheduled.
    pub scheduling: Scheduling,
    /// Lossless: a switch over its XOFF threshold pauses the upstream port
    /// for this class instead of dropping (PFC).
    pub lossless: bool,
}

impl fmt::Display for TrafficClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dscp = if self.dscp.is_empty() {
            "*".to_string()
        } else {
            let v: Vec<String> = self.dscp.iter().map(u8::to_string).collect();
            v.join(",")
        };
        write!(f, "{}:dscp={dscp}", self.name)?;
        match self.scheduling {
            Scheduling::Strict => write!(f, ":strict")?,
            Scheduling::Ets { weight } => write!(f, ":ets={weight}")?,
        }
        if self.lossless {
            write!(f, ":lossless")?;
        }
        Ok(())
    }
}

/// How a class is written, told with each class that does not parse.
const CLASS_USAGE: &str = "write a class as NAME:dscp=LIST:strict or NAME:dscp=LIST:ets=WEIGHT, \
     optionally :lossless (e.g. bulk:dscp=af11,af12:ets=50:lossless, rest:dscp=*:ets=50)";

/// What is wrong with a class as written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClassFlaw {
    /// A name that is not 1 to 12 lowercase letters, digits or '-'.
    #[error("the name must be 1 to 12 lowercase letters, digits or '-'; {CLASS_USAGE}")]
    Name,
    /// A code point that does not parse.
    #[error(transparent)]
    Dscp(#[from] linerate_wire::DscpError),
    /// An ETS weight out of range (as given).
    #[error("ets weight {0:?} is not 1 to 100")]
    EtsWeight(String),
    /// A part that is none of the known (as given).
    #[error("{0:?} is not understood; {CLASS_USAGE}")]
    NotUnderstood(String),
    /// No code points.
    #[error("no dscp=...; {CLASS_USAGE}")]
    NoDscp,
    /// Neither strict nor ETS.
    #[error("neither strict nor ets=WEIGHT; {CLASS_USAGE}")]
    NoScheduling,
}

impl FromStr for TrafficClass {
    type Err = FabricSpecError;

    fn from_str(s: &str) -> Result<Self, FabricSpecError> {
        let bad = |flaw| FabricSpecError::Class {
            class: s.to_string(),
            flaw,
        };
        let mut parts = s.split(':');
        let name = parts.next().unwrap_or_default().trim();
        let ok_name = !name.is_empty()
            && name.len() <= 12
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !ok_name {
            return Err(bad(ClassFlaw::Name));
        }
        let (mut dscp, mut scheduling, mut lossless) = (None, None, false);
        for part in parts {
            let part = part.trim();
            if let Some(list) = part.strip_prefix("dscp=") {
                dscp = Some(if list == "*" {
                    Vec::new()
                } else {
                    list.split(',')
                        .map(|d| d.parse::<Dscp>().map(Dscp::value))
                        .collect::<Result<Vec<u8>, _>>()
                        .map_err(|e| bad(ClassFlaw::Dscp(e)))?
                });
            } else if part == "strict" {
                scheduling = Some(Scheduling::Strict);
            } else if let Some(w) = part.strip_prefix("ets=") {
                let weight = w
                    .trim_end_matches('%')
                    .parse::<u32>()
                    .ok()
                    .filter(|w| (1..=100).contains(w))
                    .ok_or_else(|| bad(ClassFlaw::EtsWeight(w.to_string())))?;
                scheduling = Some(Scheduling::Ets { weight });
            } else if part == "lossless" {
                lossless = true;
            } else {
                return Err(bad(ClassFlaw::NotUnderstood(part.to_string())));
            }
        }
        let dscp = dscp.ok_or_else(|| bad(ClassFlaw::NoDscp))?;
        let scheduling = scheduling.ok_or_else(|| bad(ClassFlaw::NoScheduling))?;
        Ok(TrafficClass {
            name: name.to_string(),
            dscp,
            scheduling,
            lossless,
        })
    }
}

/// The class every port has when none is given: one best-effort queue.
pub fn best_effort() -> Vec<TrafficClass> {
    vec![TrafficClass {
        name: "be".into(),
        dscp: Vec::new(),
        scheduling: Scheduling::Ets { weight: 100 },
        lossless: false,
    }]
}

/// Checks a list of classes as a port would use them.
pub fn validate(classes: &[TrafficClass]) -> Result<(), FabricSpecError> {
    if classes.is_empty() || classes.len() > MAX_CLASSES {
        return Err(FabricSpecError::ClassCount);
    }
    let mut seen = [None::<&str>; 64];
    for c in classes {
        if classes.iter().filter(|o| o.name == c.name).count() > 1 {
            return Err(FabricSpecError::ClassTwice(c.name.clone()));
        }
        for &d in &c.dscp {
            if let Some(other) = seen[usize::from(d)] {
                return Err(FabricSpecError::DscpTwice {
                    dscp: d,
                    first: other.to_string(),
                    second: c.name.clone(),
                });
            }
            seen[usize::from(d)] = Some(&c.name);
        }
    }
    if classes.iter().filter(|c| c.dscp.is_empty()).count() > 1 {
        return Err(FabricSpecError::TwoRests);
    }
    let weights: Vec<u32> = classes
        .iter()
        .filter_map(|c| match c.scheduling {
            Scheduling::Ets { weight } => Some(weight),
            Scheduling::Strict => None,
        })
        .collect();
    let sum: u32 = weights.iter().sum();
    if !weights.is_empty() && sum != 100 {
        return Err(FabricSpecError::EtsSum(sum));
    }
    Ok(())
}

/// Which class each DSCP goes to: the class that names it, else the one
/// with `dscp=*`, else the last class.
pub fn dscp_map(classes: &[TrafficClass]) -> [u8; 64] {
    let rest = classes
        .iter()
        .position(|c| c.dscp.is_empty())
        .unwrap_or(classes.len().saturating_sub(1));
    let mut map = [rest as u8; 64];
    for (i, c) in classes.iter().enumerate() {
        for &d in &c.dscp {
            map[usize::from(d & 63)] = i as u8;
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_reads_back_as_written() {
        let c: TrafficClass = "bulk:dscp=af11,12:ets=50:lossless".parse().unwrap();
        assert_eq!(c.dscp, vec![10, 12]);
        assert_eq!(c.scheduling, Scheduling::Ets { weight: 50 });
        assert!(c.lossless);
        assert_eq!(c.to_string().parse::<TrafficClass>().unwrap(), c);
        let s: TrafficClass = "lat:dscp=ef:strict".parse().unwrap();
        assert_eq!(s.scheduling, Scheduling::Strict);
        assert!(
            "rest:dscp=*:ets=50"
                .parse::<TrafficClass>()
                .unwrap()
                .dscp
                .is_empty()
        );
    }

    #[test]
    fn bad_classes_say_what_is_wrong() {
        for (bad, says) in [
            ("Bulk:dscp=1:strict", "the name must be"),
            ("bulk:strict", "no dscp"),
            ("bulk:dscp=1", "neither"),
            ("bulk:dscp=1:ets=0", "ets weight \"0\""),
            ("bulk:dscp=99:strict", "not a DSCP"),
            ("bulk:dscp=1:fast", "\"fast\" is not understood"),
        ] {
            let e = bad.parse::<TrafficClass>().unwrap_err();
            assert!(
                matches!(&e, FabricSpecError::Class { class, .. } if class == bad),
                "{bad}: {e:?}"
            );
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn weights_add_up_to_100_and_each_dscp_has_one_class() {
        let parse =
            |v: &[&str]| -> Vec<TrafficClass> { v.iter().map(|s| s.parse().unwrap()).collect() };
        assert!(validate(&parse(&["a:dscp=1:ets=50", "b:dscp=*:ets=50"])).is_ok());
        assert_eq!(
            validate(&parse(&["a:dscp=1:ets=50", "b:dscp=*:ets=40"])),
            Err(FabricSpecError::EtsSum(90))
        );
        assert_eq!(
            validate(&parse(&["a:dscp=1:strict", "b:dscp=1:ets=100"])),
            Err(FabricSpecError::DscpTwice {
                dscp: 1,
                first: "a".into(),
                second: "b".into()
            })
        );
        assert_eq!(
            validate(&parse(&["a:dscp=*:strict", "b:dscp=*:ets=100"])),
            Err(FabricSpecError::TwoRests)
        );
    }

    #[test]
    fn unnamed_code_points_go_to_the_rest_class_or_the_last() {
        let classes: Vec<TrafficClass> = [
            "lat:dscp=ef:strict",
            "rest:dscp=*:ets=60",
            "bulk:dscp=af11:ets=40",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
        let map = dscp_map(&classes);
        assert_eq!((map[46], map[10], map[0]), (0, 2, 1));
        let map = dscp_map(&classes[..1]);
        assert_eq!(map[0], 0);
    }
}
