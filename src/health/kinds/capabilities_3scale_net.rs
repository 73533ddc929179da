//! `capabilities.3scale.net` (the 3scale operator's capabilities): ActiveDoc, Application,
//! ApplicationAuth, Backend, CustomPolicyDefinition, DeveloperAccount, DeveloperUser,
//! OpenAPI, Product, ProxyConfigPromote and Tenant, as Argo CD 3.6.2's scripts.

use super::shapes_a::{On, Say, conditions_or, or_text};
use super::{Env, Fault, Hs, Lv, Rule};

pub(super) const RULES: &[Rule] = &[
    Rule { group: "capabilities.3scale.net", kind: "ActiveDoc", check: active_doc },
    Rule { group: "capabilities.3scale.net", kind: "Application", check: application },
    Rule { group: "capabilities.3scale.net", kind: "ApplicationAuth", check: application_auth },
    Rule { group: "capabilities.3scale.net", kind: "Backend", check: backend },
    Rule {
        group: "capabilities.3scale.net",
        kind: "CustomPolicyDefinition",
        check: custom_policy_definition,
    },
    Rule { group: "capabilities.3scale.net", kind: "DeveloperAccount", check: developer_account },
    Rule { group: "capabilities.3scale.net", kind: "DeveloperUser", check: developer_user },
    Rule { group: "capabilities.3scale.net", kind: "OpenAPI", check: open_api },
    Rule { group: "capabilities.3scale.net", kind: "Product", check: product },
    Rule {
        group: "capabilities.3scale.net",
        kind: "ProxyConfigPromote",
        check: proxy_config_promote,
    },
    Rule { group: "capabilities.3scale.net", kind: "Tenant", check: tenant },
];

/// A `True` condition of type `kind`: `health`, with the condition's message or `default`.
const fn on(kind: &'static str, health: &'static str, default: &'static str) -> On {
    On::new(kind, "True", health, Say::MessageOr(default))
}

/// A `True` condition of type `kind`: `health`, with the text `message`.
const fn fixed(kind: &'static str, health: &'static str, message: &'static str) -> On {
    On::new(kind, "True", health, Say::Text(message))
}

/// Ready is Healthy; Invalid, Orphan and Failed Degraded.
fn active_doc(env: &Env<'_>) -> Result<Hs, Fault> {
    const ROWS: &[On] = &[
        fixed("Ready", "Healthy", "3scale ActiveDoc is ready"),
        on("Invalid", "Degraded", "3scale ActiveDoc configuration is invalid"),
        on("Orphan", "Degraded", "3scale ActiveDoc references non-existing resources"),
        on("Failed", "Degraded", "3scale ActiveDoc synchronization failed"),
    ];
    conditions_or(env.obj, ROWS, "Waiting for 3scale ActiveDoc status...")
}

/// Suspended in the `suspended` state; Ready `True` Healthy, any other Ready Degraded until
/// the application has an id; else Progressing.
fn application(env: &Env<'_>) -> Result<Hs, Fault> {
    let waiting = || Hs::new("Progressing", "Waiting for 3scale Application status...");
    let status = env.obj.get("status")?;
    if status.is_nil() {
        return Ok(waiting());
    }
    if status.get("state")?.is("suspended") {
        return Ok(Hs::new("Suspended", "3scale Application is suspended"));
    }
    let has_id = status.get("adminId")?.num().is_some_and(|n| n > 0.0);
    let conditions = status.get("conditions")?;
    if !conditions.is_nil() {
        for c in conditions.items()? {
            if c.get("type")?.is("Ready") {
                if c.get("status")?.is("True") {
                    return Ok(Hs::new("Healthy", "3scale Application is ready"));
                }
                if !has_id {
                    let message = or_text(c.get("message")?, "3scale Application is not ready");
                    return Ok(Hs::new("Degraded", message));
                }
            }
        }
    }
    Ok(waiting())
}

/// Ready is Healthy, Failed Degraded.
fn application_auth(env: &Env<'_>) -> Result<Hs, Fault> {
    const ROWS: &[On] = &[
        fixed("Ready", "Healthy", "3scale ApplicationAuth is ready"),
        on("Failed", "Degraded", "3scale ApplicationAuth failed"),
    ];
    conditions_or(env.obj, ROWS, "Waiting for 3scale ApplicationAuth status...")
}

/// Synced is Healthy; Invalid and Failed Degraded.
fn backend(env: &Env<'_>) -> Result<Hs, Fault> {
    const ROWS: &[On] = &[
        fixed("Synced", "Healthy", "3scale Backend is synced"),
        on("Invalid", "Degraded", "3scale Backend configuration is invalid"),
        on("Failed", "Degraded", "3scale Backend synchronization failed"),
    ];
    conditions_or(env.obj, ROWS, "Waiting for 3scale Backend status...")
}

/// Ready is Healthy; Invalid and Failed Degraded.
fn custom_policy_definition(env: &Env<'_>) -> Result<Hs, Fault> {
    const ROWS: &[On] = &[
        fixed("Ready", "Healthy", "3scale CustomPolicyDefinition is ready"),
        on("Invalid", "Degraded", "3scale CustomPolicyDefinition configuration is invalid"),
        on("Failed", "Degraded", "3scale CustomPolicyDefinition synchronization failed"),
    ];
    conditions_or(env.obj, ROWS, "Waiting for 3scale CustomPolicyDefinition status...")
}

/// Ready is Healthy; Invalid and Failed Degraded; Waiting Suspended.
fn developer_account(env: &Env<'_>) -> Result<Hs, Fault> {
    const ROWS: &[On] = &[
        fixed("Ready", "Healthy", "3scale DeveloperAccount is ready"),
        on("Invalid", "Degraded", "3scale DeveloperAccount configuration is invalid"),
        on("Failed", "Degraded", "3scale DeveloperAccount synchronization failed"),
        on("Waiting", "Suspended", "3scale DeveloperAccount is waiting for approval"),
    ];
    conditions_or(env.obj, ROWS, "Waiting for 3scale DeveloperAccount status...")
}

/// Suspended in the `suspended` state; Ready is Healthy; Invalid, Orphan and Failed
/// Degraded.
fn developer_user(env: &Env<'_>) -> Result<Hs, Fault> {
    const ROWS: &[On] = &[
        fixed("Ready", "Healthy", "3scale DeveloperUser is ready"),
        on("Invalid", "Degraded", "3scale DeveloperUser configuration is invalid"),
        on("Orphan", "Degraded", "3scale DeveloperUser references non-existing resources"),
        on("Failed", "Degraded", "3scale DeveloperUser synchronization failed"),
    ];
    let status = env.obj.get("status")?;
    if !status.is_nil() && status.get("developerUserState")?.is("suspended") {
        return Ok(Hs::new("Suspended", "3scale Developer user is waiting for admin approval"));
    }
    conditions_or(env.obj, ROWS, "Waiting for 3scale DeveloperUser status...")
}

/// Ready is Healthy; Invalid and Failed Degraded.
fn open_api(env: &Env<'_>) -> Result<Hs, Fault> {
    const ROWS: &[On] = &[
        fixed("Ready", "Healthy", "3scale OpenAPI is ready"),
        on("Invalid", "Degraded", "3scale OpenAPI configuration is invalid"),
        on("Failed", "Degraded", "3scale OpenAPI reconciliation failed"),
    ];
    conditions_or(env.obj, ROWS, "Waiting for 3scale OpenAPI status...")
}

/// Synced is Healthy; Invalid, Orphan and Failed Degraded.
fn product(env: &Env<'_>) -> Result<Hs, Fault> {
    const ROWS: &[On] = &[
        fixed("Synced", "Healthy", "3scale Product is synced"),
        on("Invalid", "Degraded", "3scale Product configuration is invalid"),
        on("Orphan", "Degraded", "3scale Product references non-existing resources"),
        on("Failed", "Degraded", "3scale Product synchronization failed"),
    ];
    conditions_or(env.obj, ROWS, "Waiting for 3scale Product status...")
}

/// Ready is Healthy, In-progress Progressing, Failed Degraded.
fn proxy_config_promote(env: &Env<'_>) -> Result<Hs, Fault> {
    const ROWS: &[On] = &[
        fixed("Ready", "Healthy", "3scale ProxyConfigPromote is ready"),
        on("In-progress", "Progressing", "3scale ProxyConfigPromote is in progress"),
        on("Failed", "Degraded", "3cale ProxyConfigPromote failed"),
    ];
    conditions_or(env.obj, ROWS, "Waiting for 3scale ProxyConfigPromote status...")
}

/// Healthy when Ready is `True` and the tenant and its admin have ids; a Ready that is not
/// `True` is Degraded; else Progressing.
fn tenant(env: &Env<'_>) -> Result<Hs, Fault> {
    let status = env.obj.get("status")?;
    if !status.is_nil() {
        let positive = |v: Lv<'_>| v.num().is_some_and(|n| n > 0.0);
        let has_tenant = positive(status.get("tenantId")?);
        let has_admin = positive(status.get("adminId")?);
        let conditions = status.get("conditions")?;
        let mut ready = false;
        if !conditions.is_nil() {
            for c in conditions.items()? {
                if c.get("type")?.is("Ready") && c.get("status")?.is("True") {
                    ready = true;
                    break;
                }
            }
        }
        if ready && has_tenant && has_admin {
            return Ok(Hs::new("Healthy", "3scale Tenant is ready"));
        }
        if !conditions.is_nil() {
            for c in conditions.items()? {
                if c.get("type")?.is("Ready") && !c.get("status")?.is("True") {
                    let message = or_text(c.get("message")?, "3scale Tenant is degraded");
                    return Ok(Hs::new("Degraded", message));
                }
            }
        }
    }
    Ok(Hs::new("Progressing", "Waiting for 3scale Tenant status..."))
}
