//! Reading the benchmarks' inputs from `testdata/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `testdata/<rel>`.
pub fn path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata").join(rel)
}

/// The text of `testdata/<rel>`.
pub fn testdata(rel: &str) -> String {
    let path = path(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file below `testdata/<rel>`, by path relative to it.
pub fn files(rel: &str) -> BTreeMap<String, String> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).expect("read_dir") {
            let p = entry.expect("entry").path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p.strip_prefix(base).expect("below").to_string_lossy().replace('\\', "/");
                out.insert(rel, std::fs::read_to_string(&p).expect("read"));
            }
        }
    }
    let base = path(rel);
    let mut out = BTreeMap::new();
    walk(&base, &base, &mut out);
    out
}

/// The health fixtures of one folder of `testdata/health/argo-cd-3.6/` (`group/Kind`, as Argo
/// CD names its folders): the first object of every YAML file below its `testdata/`, by path
/// below it, in the order of the paths; a file that holds no object is left out with a note.
pub fn health_fixtures(kind_dir: &str) -> Vec<(String, serde_json::Value)> {
    let dir = path("health/argo-cd-3.6").join(kind_dir).join("testdata");
    let yaml = |rel: &String| rel.ends_with(".yaml") || rel.ends_with(".yml");
    let rel = format!("health/argo-cd-3.6/{kind_dir}/testdata");
    let found = if dir.is_dir() { files(&rel) } else { BTreeMap::new() };
    found
        .into_iter()
        .filter(|(name, _)| yaml(name))
        .filter_map(|(name, text)| match gitops_core::object::parse_documents(&text) {
            Ok(mut docs) if !docs.is_empty() => Some((name, docs.remove(0))),
            other => {
                eprintln!("health_fixtures: {kind_dir} {name}: no object ({:?})", other.err());
                None
            }
        })
        .collect()
}

/// Argo CD 3.6.2's `resource_customizations/`, where a checkout is found:
/// `ARGO_CD_RESOURCE_CUSTOMIZATIONS`, else `../shared/argo-cd-3.6/resource_customizations`
/// beside the project, else the Go module of Argo CD 3.6.2. The benchmarks that run Argo CD's
/// own scripts read them from here at run time (the project holds none of them).
pub fn argo_cd_scripts() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let candidates = [
        std::env::var_os("ARGO_CD_RESOURCE_CUSTOMIZATIONS").map(PathBuf::from),
        Some(manifest.join("../shared/argo-cd-3.6/resource_customizations")),
        std::env::var_os("HOME").map(|h| {
            PathBuf::from(h)
                .join("go/pkg/mod/github.com/argoproj/argo-cd/v3@v3.6.2/resource_customizations")
        }),
    ];
    candidates.into_iter().flatten().find(|p| p.is_dir())
}

/// One of Argo CD 3.6.2's action tests (`testdata/actions/argo-cd-3.6/`): the input object and
/// the parameters.
pub type ActionTest = (serde_json::Value, BTreeMap<String, String>);

/// The tests of one action, `group/Kind/action`, in its kind's `action_test.yaml` (`doc`,
/// already read), each input object read from the kind's folder.
pub fn action_tests_of(name: &str, doc: &serde_json::Value) -> Vec<ActionTest> {
    let (kind, action) = name.rsplit_once('/').expect("group/Kind/action");
    let dir = format!("actions/argo-cd-3.6/{kind}/actions");
    doc["actionTests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["action"] == action)
        .map(|t| {
            let params = t["parameters"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect();
            let input = t["inputPath"].as_str().expect("inputPath");
            let text = testdata(&format!("{dir}/{input}"));
            (gitops_core::object::parse_documents(&text).expect("yaml").remove(0), params)
        })
        .collect()
}
