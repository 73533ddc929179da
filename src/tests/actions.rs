//! Resource actions: Argo CD's sample folders under `testdata/actions/resource_customizations/`
//! (every `action_test.yaml`, exact), and the contract and hostile cases of
//! `testdata/actions/cases.yaml`.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::actions::{
    ActionScripts, ActionTestKind, Actions, run_action_tests, test_now,
};
use crate::script::{LuaEngine, ScriptLimits};
use crate::tests::lua::files_below;
use crate::tests::support::{read, selected, testdata};

/// Every case of every sample folder passes, with exact expectations on top of Argo CD's test:
/// a discovery lists exactly the expected actions (Argo only checks that each discovered one
/// is expected), and an action gives as many resources as its expected file holds.
#[test]
fn argo_sample_folders_pass() {
    let files = files_below(&testdata().join("actions/resource_customizations"));
    let actions = Actions::new(ActionScripts::new().with_directory(&files));
    let (mut discovery, mut action, mut failures) = (0, 0, Vec::new());
    for (path, yaml) in &files {
        let Some(dir) = path.strip_suffix("action_test.yaml") else { continue };
        let inputs: BTreeMap<String, String> = files
            .iter()
            .filter_map(|(p, t)| p.strip_prefix(dir).map(|rel| (rel.to_string(), t.clone())))
            .collect();
        let cases = run_action_tests(yaml, &inputs, &actions, test_now()).expect(path);
        for c in cases {
            let name = format!("{dir}{:?}/{}/{}", c.kind, c.action, c.input_path);
            if !selected(&name) {
                continue;
            }
            let exact = match c.kind {
                ActionTestKind::Discovery => {
                    discovery += 1;
                    let mut want = c.expected_actions.clone();
                    want.sort_by(|a, b| a.name.cmp(&b.name));
                    c.got_actions == want
                }
                ActionTestKind::Action => {
                    action += 1;
                    c.message.is_empty() && c.got_resources.len() == c.expected_objects
                        || c.got_resources.is_empty() && c.expected_objects == 0
                }
            };
            if !c.passed || !exact {
                failures.push(format!("{name}: {} {:?}", c.message, c.got_actions));
            }
        }
    }
    assert!(failures.is_empty(), "{} failing:\n{}", failures.len(), failures.join("\n"));
    if std::env::var("GITOPS_TEST").is_err() {
        assert_eq!((discovery, action), (17, 16), "cases run");
    }
}
