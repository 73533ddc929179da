//! `rabbitmq.com` (RabbitMQ operators): RabbitmqCluster, and Binding, Exchange, Permission,
//! Policy, Queue, Shovel, User and Vhost of the messaging topology operator, as Argo CD
//! 3.6.2's scripts.

use super::{Env, Fault, Hs, Lv, Rule};

const G: &str = "rabbitmq.com";

pub(super) const RULES: &[Rule] = &[
    Rule { group: G, kind: "Binding", check: binding },
    Rule { group: G, kind: "Exchange", check: exchange },
    Rule { group: G, kind: "Permission", check: permission },
    Rule { group: G, kind: "Policy", check: policy },
    Rule { group: G, kind: "Queue", check: queue },
    Rule { group: G, kind: "RabbitmqCluster", check: rabbitmq_cluster },
    Rule { group: G, kind: "Shovel", check: shovel },
    Rule { group: G, kind: "User", check: user },
    Rule { group: G, kind: "Vhost", check: vhost },
];

/// The topology objects: the first `Ready` condition that is `True` with reason
/// `SuccessfulCreateOrUpdate` (Healthy) or `False` with `FailedCreateOrUpdate` (Degraded);
/// else Unknown. `what` names the object in the messages.
fn topology(env: &Env<'_>, what: &str) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() && !status.get("conditions")?.is_nil() {
        for c in status.get("conditions")?.items()? {
            if !c.get("type")?.is("Ready") {
                continue;
            }
            if c.get("status")?.is("True") && c.get("reason")?.is("SuccessfulCreateOrUpdate") {
                return Ok(Hs::new("Healthy", format!("RabbitMQ {what} ready")));
            }
            if c.get("status")?.is("False") && c.get("reason")?.is("FailedCreateOrUpdate") {
                return Ok(Hs::new(
                    "Degraded",
                    format!("RabbitMQ {what} failed to be created or updated"),
                ));
            }
        }
    }
    Ok(Hs::new("Unknown", format!("RabbitMQ {what} status is unknown")))
}

/// One rule per topology kind, each [`topology`] with the kind's name.
macro_rules! topology_rules {
    ($($rule:ident => $what:literal),* $(,)?) => {
        $(
            #[doc = concat!("A ", $what, "'s Ready condition.")]
            fn $rule(env: &Env<'_>) -> Result<Hs, Fault> {
                topology(env, $what)
            }
        )*
    };
}

topology_rules! {
    binding => "binding",
    exchange => "exchange",
    permission => "permission",
    policy => "policy",
    queue => "queue",
    shovel => "shovel",
    user => "user",
    vhost => "vhost",
}

/// A failed reconcile is Degraded; `Unknown` availability or replicas Progressing; scaled to
/// zero Suspended; not available or replicas not ready Progressing; both `True` Healthy;
/// else Progressing, waiting for the operator.
fn rabbitmq_cluster(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() && !status.get("conditions")?.is_nil() {
        let (mut available, mut replicas, mut replicas_reason) = (Lv::Nil, Lv::Nil, Lv::Nil);
        for c in status.get("conditions")?.items()? {
            let t = c.get("type")?;
            if t.is("ReconcileSuccess") && c.get("status")?.is("False") {
                return Ok(Hs::new("Degraded", c.get("message")?));
            }
            if t.is("ClusterAvailable") {
                available = c.get("status")?;
            }
            if t.is("AllReplicasReady") {
                replicas = c.get("status")?;
                replicas_reason = c.get("reason")?;
            }
        }
        if available.is("Unknown") || replicas.is("Unknown") {
            return Ok(Hs::new(
                "Progressing",
                "Waiting for RabbitMQ cluster readiness (conditions unknown)",
            ));
        }
        if replicas_reason.is("ScaledToZero")
            && replicas.is("False")
            && env.obj.get("spec")?.get("replicas")?.is_num(0.0)
        {
            return Ok(Hs::new("Suspended", "RabbitmqCluster is scaled to 0 replicas"));
        }
        if available.is("False") {
            return Ok(Hs::new("Progressing", "Waiting for RabbitMQ cluster formation"));
        }
        if replicas.is("False") {
            return Ok(Hs::new("Progressing", "Waiting for RabbitMQ instances ready"));
        }
        if available.is("True") && replicas.is("True") {
            return Ok(Hs::new("Healthy", "RabbitMQ cluster ready"));
        }
    }
    Ok(Hs::new("Progressing", "Waiting for RabbitMQ Operator"))
}
