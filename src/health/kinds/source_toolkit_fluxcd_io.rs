//! `source.toolkit.fluxcd.io` (Flux sources): GitRepository, Bucket, HelmChart,
//! OCIRepository and HelmRepository, as Argo CD 3.6.2's scripts (the first four are the same
//! script).

use super::shapes_d::{Text, cat};
use super::{Env, Fault, Hs, Lv, Rule};

const G: &str = "source.toolkit.fluxcd.io";

pub(super) const RULES: &[Rule] = &[
    Rule { group: G, kind: "Bucket", check: source },
    Rule { group: G, kind: "GitRepository", check: source },
    Rule { group: G, kind: "HelmChart", check: source },
    Rule { group: G, kind: "HelmRepository", check: helm_repository },
    Rule { group: G, kind: "OCIRepository", check: source },
];

/// `spec.suspend` is Suspended; else two progressing signals (Ready `Unknown`, Reconciling
/// `True`) are Progressing, two successes (Ready `True`, ArtifactInStorage `True`) Healthy,
/// anything else Degraded, with the Ready reason (and the ArtifactOutdated reasons after it);
/// no conditions is Progressing.
fn source(env: &Env<'_>) -> Result<Hs, Fault> {
    let suspend = env.obj.get("spec")?.get("suspend")?;
    if suspend.is_bool(true) {
        return Ok(Hs::new("Suspended", cat(&[env.obj.get("kind")?, Lv::Str(" is suspended")])?));
    }
    let status = env.obj.get("status")?;
    if !status.is_nil() && !status.get("conditions")?.is_nil() {
        let (mut progressing, mut succeeded) = (0usize, 0usize);
        let mut message = Text::Read(Lv::Str(""));
        for c in status.get("conditions")?.items()? {
            let t = c.get("type")?;
            if t.is("Ready") {
                let s = c.get("status")?;
                if s.is("True") {
                    succeeded += 1;
                } else if s.is("Unknown") {
                    progressing += 1;
                }
                message = Text::Read(c.get("reason")?);
            } else if t.is("Reconciling") && c.get("status")?.is("True") {
                progressing += 1;
            } else if t.is("ArtifactOutdated") && c.get("status")?.is("True") {
                message.append(&[Lv::Str(" "), c.get("reason")?])?;
            } else if t.is("ArtifactInStorage") && c.get("status")?.is("True") {
                succeeded += 1;
            }
        }
        let code = if progressing == 2 {
            "Progressing"
        } else if succeeded == 2 {
            "Healthy"
        } else {
            "Degraded"
        };
        return Ok(Hs::new(code, message.field()));
    }
    Ok(Hs::new("Progressing", "Status unknown"))
}

/// As the other sources, after: a repository of type `oci` is Healthy (it reports no
/// status).
fn helm_repository(env: &Env<'_>) -> Result<Hs, Fault> {
    let spec = env.obj.get("spec")?;
    if !spec.get("suspend")?.is_bool(true) && spec.get("type")?.is("oci") {
        return Ok(Hs::new(
            "Healthy",
            "Helm repositories of type 'oci' do not contain any information in the status.",
        ));
    }
    source(env)
}
