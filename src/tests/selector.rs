//! argocd-cm `resource.selectors`: the table of `testdata/selector/cases.json`, written by
//! k8s.io/apimachinery v0.37.0's `labels.Parse` as Argo CD 3.6.2 calls it
//! (`oracle/selector/main.go`, from `testdata/selector/inputs.json`). Each selector is read
//! through `Settings::from_data` and refused with exactly Argo CD's settings error, or
//! accepted and matched against the file's label sets as `Selector.Matches` matches them.

use serde::Deserialize;
use std::collections::BTreeMap;

use super::support::read;
use crate::config::Settings;

#[derive(Deserialize)]
struct Cases {
    labels: Vec<BTreeMap<String, String>>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    selector: String,
    #[serde(default)]
    error: Option<String>,
    /// The indexes of the label sets the selector matches.
    #[serde(default)]
    matches: Option<Vec<usize>>,
}

#[test]
fn selectors_parse_refuse_and_match_as_apimachinery() {
    let file: Cases = serde_json::from_str(&read("selector/cases.json")).expect("cases.json");
    assert!(file.cases.len() > 500, "{} cases", file.cases.len());
    let label_sets: Vec<serde_json::Map<String, serde_json::Value>> = file
        .labels
        .iter()
        .map(|l| l.iter().map(|(k, v)| (k.clone(), v.clone().into())).collect())
        .collect();
    let mut failures = Vec::new();
    for case in &file.cases {
        let rules = serde_json::json!([{"kinds": ["Pod"], "selector": case.selector}]);
        let data = BTreeMap::from([("resource.selectors".to_string(), rules.to_string())]);
        let got = Settings::from_data(&data).map_err(|e| e.to_string());
        let want =
            case.error.as_ref().map(|e| format!("invalid argocd-cm key `resource.selectors`: {e}"));
        match (&got, &want) {
            (Err(g), Some(w)) if g == w => {}
            (Ok(_), None) => {
                let s = crate::selector::LabelSelector::parse(&case.selector).expect("parsed");
                let matched: Vec<usize> =
                    (0..label_sets.len()).filter(|&i| s.matches_labels(&label_sets[i])).collect();
                if Some(&matched) != case.matches.as_ref() {
                    failures.push(format!(
                        "{:?}: matches {matched:?}, want {:?}",
                        case.selector, case.matches
                    ));
                }
            }
            _ => failures.push(format!(
                "{:?}:\n   got {:?}\n  want {want:?}",
                case.selector,
                got.as_ref().err()
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {}:\n{}",
        failures.len(),
        file.cases.len(),
        failures.join("\n")
    );
}
