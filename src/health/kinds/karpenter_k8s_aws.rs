//! `karpenter.k8s.aws`: EC2NodeClass, as Argo CD 3.6.2's script.

use super::shapes_c::{ready_condition, status_conditions};
use super::{Env, Fault, Hs, Rule};

pub(super) const RULES: &[Rule] =
    &[Rule { group: "karpenter.k8s.aws", kind: "EC2NodeClass", check: ec2_node_class }];

/// The first decided Ready condition (Healthy `EC2NodeClass is ready`, or Degraded with its
/// message); else Progressing.
fn ec2_node_class(env: &Env<'_>) -> Result<Hs, Fault> {
    if let Some(conditions) = status_conditions(env.obj)?
        && let Some(hs) = ready_condition(conditions, Some("EC2NodeClass is ready"))?
    {
        return Ok(hs);
    }
    Ok(Hs::new("Progressing", "Waiting for EC2NodeClass to be ready"))
}
