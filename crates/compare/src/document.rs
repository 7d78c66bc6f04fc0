//! The document of many runs: one `linerate.result/1` whose `study` holds
//! every run with its parameters and the findings drawn from them. Studies
//! and comparisons are written through here.

use std::collections::BTreeMap;
use std::time::SystemTime;

use linerate_result::{ResultDoc, Study, StudyPoint};
use serde_json::{Value, json};

use crate::CompareError;

/// Many runs and what was found in them, before they become a document.
#[derive(Debug, Clone)]
pub struct ManyRuns {
    /// `study` or `compare`.
    pub kind: &'static str,
    /// Which study, or which mode of compare.
    pub detail: String,
    /// When the first run began.
    pub started: SystemTime,
    /// What was asked, as the document records it.
    pub parameters: Value,
    /// Every run.
    pub points: Vec<StudyPoint>,
    /// The run whose hosts and summary head the document (the last
    /// when out of range).
    pub headline: usize,
    /// Named figures drawn from the runs.
    pub findings: BTreeMap<String, f64>,
    /// What each finding's name means.
    pub definitions: BTreeMap<String, String>,
}

impl ManyRuns {
    /// The one document, with `command_line` as the command that made it.
    pub fn into_document(self, command_line: Vec<String>) -> Result<ResultDoc, CompareError> {
        let Some(head) = self.points.get(self.headline).or(self.points.last()) else {
            return Err(CompareError::NoRuns);
        };
        let mut parameters = self.parameters;
        if self.kind == "study" {
            parameters["study"] = json!(self.detail);
        }
        let (hosts, summary) = (head.result.hosts.clone(), head.result.summary.clone());
        let lab = head.result.lab.clone();
        Ok(ResultDoc {
            lab,
            study: Some(Study {
                points: self.points,
                findings: self.findings,
                definitions: self.definitions,
            }),
            ..ResultDoc::new(
                self.kind,
                &command_line,
                self.started,
                hosts,
                parameters,
                summary,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::throughput_doc as doc;
    use crate::rounds::point;

    fn runs(points: Vec<StudyPoint>) -> ManyRuns {
        ManyRuns {
            kind: "study",
            detail: "streams".into(),
            started: SystemTime::UNIX_EPOCH,
            parameters: json!({"rounds": 2}),
            points,
            headline: 7,
            findings: BTreeMap::new(),
            definitions: BTreeMap::new(),
        }
    }

    #[test]
    fn no_runs_make_no_document() {
        assert!(matches!(
            runs(vec![]).into_document(vec![]),
            Err(CompareError::NoRuns)
        ));
    }

    #[test]
    fn the_document_names_its_study_and_heads_with_the_chosen_run() {
        let pts = vec![
            point("a", json!({}), doc(1.0)),
            point("b", json!({}), doc(2.0)),
        ];
        let d = runs(pts).into_document(vec!["linerate".into()]).unwrap();
        assert_eq!(d.kind, "study");
        assert_eq!(d.parameters["study"], "streams");
        assert_eq!(d.parameters["rounds"], 2);
        // Headline 7 is out of range: the last run heads the document.
        assert_eq!(d.summary.bits_per_second, 2.0);
        assert_eq!(d.study.unwrap().points.len(), 2);
    }
}
