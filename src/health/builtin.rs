//! The built-in rules and checks one by one, without the script lookup and the deletion rule
//! of [`assess`](super::assess). Public as `health::parts`.

use serde_json::Value;

use super::seam::ScriptOutput;
use super::{
    HealthError, HealthResult, apiservice, daemonset, deployment, fields, hpa, ingress, job, kinds,
    pod, pvc, replicaset, service, statefulset, workflow,
};
use crate::object::ObjectRef;

/// The built-in rule for `obj`'s kind, run as Argo CD runs the script it follows (without the
/// deletion rule of [`assess`](super::assess)): `None` when Argo CD 3.6.2 ships no health script for the kind.
/// [`HealthContext::builtin_kinds`](super::HealthContext::builtin_kinds) lists the kinds.
/// No rule reads the time (see [`HealthContext::now`](super::HealthContext::now) for the scripts that do).
pub fn builtin_rule(obj: &Value) -> Option<Result<ScriptOutput, HealthError>> {
    kinds::evaluate_object(obj)
}

/// The built-in (Go) check for the object's group and kind, without the deletion rule and
/// scripts: `Ok(None)` when the kind has none.
pub(crate) fn builtin(
    obj: &Value,
    object: &ObjectRef,
) -> Result<Option<HealthResult>, HealthError> {
    let check = |name: &'static str, versions: &[&str]| -> Result<(), HealthError> {
        if versions.contains(&object.version.as_str()) {
            Ok(())
        } else {
            Err(HealthError::UnsupportedVersion {
                object: Box::new(object.clone()),
                check: name,
                gvk: format!("{}/{}, Kind={}", object.group, object.version, object.kind),
            })
        }
    };
    let r = |name: &'static str| fields::Reader::new(obj, object, name);
    let result = match (object.group.as_str(), object.kind.as_str()) {
        ("apps", "Deployment") => {
            check("Deployment", &["v1"])?;
            deployment::health(&r("Deployment"))?
        }
        ("apps", "StatefulSet") => {
            check("StatefulSet", &["v1"])?;
            statefulset::health(&r("StatefulSet"))?
        }
        ("apps", "ReplicaSet") => {
            check("ReplicaSet", &["v1"])?;
            replicaset::health(&r("ReplicaSet"))?
        }
        ("apps", "DaemonSet") => {
            check("DaemonSet", &["v1"])?;
            daemonset::health(&r("DaemonSet"))?
        }
        ("extensions" | "networking.k8s.io", "Ingress") => ingress::health(obj),
        ("argoproj.io", "Workflow") => workflow::health(obj),
        ("apiregistration.k8s.io", "APIService") => {
            check("APIService", &["v1", "v1beta1"])?;
            apiservice::health(&r("APIService"))?
        }
        ("", "Service") => {
            check("Service", &["v1"])?;
            service::health(&r("Service"))?
        }
        ("", "PersistentVolumeClaim") => {
            check("PersistentVolumeClaim", &["v1"])?;
            pvc::health(&r("PersistentVolumeClaim"))?
        }
        ("", "Pod") => {
            check("Pod", &["v1"])?;
            pod::health(&r("Pod"))?
        }
        ("batch", "Job") => {
            check("Job", &["v1"])?;
            job::health(&r("Job"))?
        }
        ("autoscaling", "HorizontalPodAutoscaler") => {
            check("HPA", &["v1", "v2"])?;
            hpa::health(&r("HPA"))?
        }
        _ => return Ok(None),
    };
    Ok(Some(result))
}
