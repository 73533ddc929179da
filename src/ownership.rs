//! Which live objects belong to an application, as Argo CD's controller decides it.
//!
//! The controller never compares or prunes what the cluster merely holds. Its cluster cache
//! hands a comparison only the app's live objects (`GetManagedLiveObjs`):
//!
//! - the live copy of every desired object (paired by group, kind, namespace and name),
//!   whatever its tracking says;
//! - every other live object whose tracking names the app's instance name and that has no
//!   `ownerReferences` (an object with an owner, such as the ReplicaSet of a Deployment, is a
//!   child of another object, never a top-level resource of the app).
//!
//! The tracking is read by `application.resourceTrackingMethod`: the
//! `argocd.argoproj.io/tracking-id` annotation for `annotation` and `annotation+label` (the
//! default, also for `""`), the instance label for `label`. Where `argocd-cm` sets
//! `installationID`, an annotation counts only on an object whose
//! `argocd.argoproj.io/installation-id` annotation holds that id. The instance name is the
//! app's name, or `<namespace>_<name>` for an app outside the namespace Argo CD runs in
//! ([`Settings::namespace`]; apps in any namespace).
//!
//! An object whose kind the settings exclude ([`Settings::excludes`]) is never the app's: Argo
//! CD does not watch it, so its live copy is not found and a desired one is not synced.
//!
//! Everything else (the namespace's `kube-root-ca.crt`, Endpoints, objects of other apps or of
//! no app) is [`Unmanaged`]: not compared, not pruned. [`ManagedLive::new`] sorts a namespace dump
//! this way; [`crate::diff::diff_app`] applies the same rule and names what it left out.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{Application, Settings, TrackingMethod};
use crate::object::{ObjectRef, Scopes, annotation, label};
use crate::vocabulary::{INSTALLATION_ID_ANNOTATION, TRACKING_ID_ANNOTATION};

/// The longest label value Kubernetes accepts.
const LABEL_MAX_LENGTH: usize = 63;

/// Why a live object is not one of the app's resources.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "camelCase")]
#[non_exhaustive]
pub enum Unclaimed {
    /// It has `ownerReferences`: a part of another object (a ReplicaSet of a Deployment, the
    /// Pods of a ReplicaSet), never a top-level resource of an app.
    #[serde(rename_all = "camelCase")]
    Owned {
        /// The first owner, `group/Kind name` (`Kind name` for the core group).
        owner: String,
    },
    /// Its tracking names another application (its instance name).
    #[serde(rename_all = "camelCase")]
    TrackedByOther {
        /// The other app's instance name (`<namespace>_<name>` for an app in another
        /// namespace).
        app: String,
    },
    /// Its tracking names no application (or it was applied by another installation).
    Untracked,
    /// The application has no name, so no tracking can name it.
    NoAppName,
    /// Its kind is excluded by the settings (Argo CD's built-in exclusions,
    /// `resource.exclusions`, `resource.inclusions`): Argo CD does not watch it.
    Excluded,
    /// Its labels do not match the `resource.selectors` of its kind: Argo CD does not watch
    /// it.
    #[serde(rename_all = "camelCase")]
    Unwatched {
        /// The selector it fails ([`Settings::label_selector`]).
        selector: String,
    },
    /// The app's AppProject does not permit it (its kind, or its namespace on the destination
    /// cluster): Argo CD leaves it out of the comparison (`IsLiveResourcePermitted`).
    #[serde(rename_all = "camelCase")]
    NotPermitted {
        /// The project's name.
        project: String,
    },
}

/// Why, in words: `owned by apps/Deployment web (ownerReferences)`, `tracked by application
/// `billing``, `tracked by no application`, `not desired, and the application has no name to
/// track it by`.
impl std::fmt::Display for Unclaimed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unclaimed::Owned { owner } => write!(f, "owned by {owner} (ownerReferences)"),
            Unclaimed::TrackedByOther { app } => {
                write!(f, "tracked by application `{}`", app.replace('_', "/"))
            }
            Unclaimed::Untracked => f.write_str("tracked by no application"),
            Unclaimed::NoAppName => {
                f.write_str("not desired, and the application has no name to track it by")
            }
            Unclaimed::Excluded => f.write_str("its kind is excluded in the settings"),
            Unclaimed::Unwatched { selector } => {
                write!(f, "its labels do not match the resource selector \"{selector}\"")
            }
            Unclaimed::NotPermitted { project } => {
                write!(f, "not permitted in project `{project}`")
            }
        }
    }
}

/// A live object that is not one of the app's resources, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Unmanaged {
    /// The object.
    pub object: ObjectRef,
    /// Why it is not the app's.
    #[serde(flatten)]
    pub reason: Unclaimed,
}

/// The live objects of a namespace dump sorted by [`ManagedLive::new`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ManagedLive<'v> {
    /// The app's live objects, in input order: what a comparison and a sync plan take.
    pub managed: Vec<&'v Value>,
    /// The others, sorted by object.
    pub unmanaged: Vec<Unmanaged>,
}

impl Application {
    /// The name the app's tracking carries: the app's name, or `<namespace>_<name>` when the app
    /// lives outside [`Settings::namespace`] (Argo CD's `InstanceName`).
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::config::{Application, Settings};
    /// let app = Application::from_value(&serde_json::json!(
    ///     {"metadata": {"name": "shop", "namespace": "team-a"}})).unwrap();
    /// assert_eq!(app.instance_name(&Settings::default()), "team-a_shop");
    /// ```
    pub fn instance_name(&self, settings: &Settings) -> String {
        let app = self;
        let (name, namespace) = (&app.metadata.name, &app.metadata.namespace);
        if name.is_empty() || namespace.is_empty() || *namespace == settings.namespace {
            name.clone()
        } else {
            format!("{namespace}_{name}")
        }
    }
}

/// A parsed tracking id, `<app>:<group>/<kind>:<namespace>/<name>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TrackingId<'a> {
    pub app: &'a str,
    pub group: &'a str,
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

impl<'a> TrackingId<'a> {
    /// Parses an id as Argo CD does: three `:`-separated parts (the last one keeps any further
    /// `:`), the second and third each exactly two `/`-separated parts.
    fn parse(id: &'a str) -> Option<TrackingId<'a>> {
        let mut parts = id.splitn(3, ':');
        let (app, gk, nn) = (parts.next()?, parts.next()?, parts.next()?);
        let two = |s: &'a str| {
            let (a, b) = s.split_once('/')?;
            (!b.contains('/')).then_some((a, b))
        };
        let (group, kind) = two(gk)?;
        let (namespace, name) = two(nn)?;
        Some(TrackingId { app, group, kind, namespace, name })
    }
}

/// The tracking id of a live object under an annotation method (`GetAppInstance`): `None` for
/// label tracking, without a valid annotation, or for another installation's object.
pub(crate) fn tracking_id<'v>(obj: &'v Value, settings: &Settings) -> Option<TrackingId<'v>> {
    if settings.tracking_method == TrackingMethod::Label {
        return None;
    }
    if !settings.installation_id.is_empty()
        && annotation(obj, INSTALLATION_ID_ANNOTATION) != Some(settings.installation_id.as_str())
    {
        return None;
    }
    TrackingId::parse(annotation(obj, TRACKING_ID_ANNOTATION)?)
}

impl Settings {
    /// The instance name a live object's tracking names (Argo CD's `GetAppName`): the instance
    /// label for label tracking, else the app of the tracking-id annotation (see the module
    /// documentation for `installationID`). `None` when it names none.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::config::Settings;
    /// let cm = serde_json::json!({"metadata": {"annotations":
    ///     {"argocd.argoproj.io/tracking-id": "shop:/ConfigMap:shop/web"}}});
    /// assert_eq!(Settings::default().tracked_app(&cm), Some("shop"));
    /// let bad = serde_json::json!({"metadata": {"annotations":
    ///     {"argocd.argoproj.io/tracking-id": "shop"}}});
    /// assert_eq!(Settings::default().tracked_app(&bad), None);
    /// ```
    pub fn tracked_app<'v>(&self, obj: &'v Value) -> Option<&'v str> {
        let settings = self;
        let app = match settings.tracking_method {
            TrackingMethod::Label => label(obj, &settings.instance_label_key),
            TrackingMethod::Annotation | TrackingMethod::AnnotationAndLabel => {
                tracking_id(obj, settings).map(|id| id.app)
            }
        };
        app.filter(|a| !a.is_empty())
    }
}

/// Whether a live object's tracking id names the object itself (`isSelfReferencedObj`): true
/// when the tracking method carries no id or the object has none.
pub(crate) fn self_referenced(live: &Value, r: &ObjectRef, settings: &Settings) -> bool {
    let Some(id) = tracking_id(live, settings) else { return true };
    id.group == r.group
        && id.kind == r.kind
        && id.name == r.name
        && (id.namespace == r.namespace || r.namespace.is_empty())
}

/// A label value cut to 63 characters, then stripped of trailing characters that are not
/// ASCII letters or digits (Argo CD's `TruncateLabel`); values within the limit are kept as
/// they are. `None` when nothing valid is left.
pub(crate) fn truncate_label(value: &str) -> Option<&str> {
    if value.len() <= LABEL_MAX_LENGTH {
        return Some(value);
    }
    let mut end = LABEL_MAX_LENGTH;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    let cut = value[..end].trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    (!cut.is_empty()).then_some(cut)
}

/// Whether an object's kind is excluded on the app's destination cluster
/// ([`Settings::excludes`]): Argo CD neither watches, compares nor prunes it.
pub(crate) fn excluded(r: &ObjectRef, app: &Application, settings: &Settings) -> bool {
    settings.excludes(&r.group, &r.kind, &app.spec.destination.server)
}

/// The first owner of an object with `ownerReferences`, as `group/Kind name`.
fn first_owner(obj: &Value) -> Option<String> {
    let refs = obj.get("metadata")?.get("ownerReferences")?.as_array()?;
    if refs.is_empty() {
        return None;
    }
    let o = &refs[0];
    let s = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or("");
    let group = crate::object::split_api_version(s("apiVersion")).0;
    let gk =
        if group.is_empty() { s("kind").to_string() } else { format!("{group}/{}", s("kind")) };
    Some(format!("{gk} {}", s("name")))
}

/// Whether a live object that no desired object pairs with is the app's: `Ok` when its
/// tracking names `instance` and it has no owner, else why not.
pub(crate) fn claim(live: &Value, instance: &str, settings: &Settings) -> Result<(), Unclaimed> {
    if let Some(owner) = first_owner(live) {
        return Err(Unclaimed::Owned { owner });
    }
    if instance.is_empty() {
        return Err(Unclaimed::NoAppName);
    }
    match settings.tracked_app(live) {
        Some(app) if app == instance => Ok(()),
        Some(app) => Err(Unclaimed::TrackedByOther { app: app.to_string() }),
        None => Err(Unclaimed::Untracked),
    }
}

/// The identity a desired object pairs by once the destination namespace is applied: a
/// cluster-scoped kind has no namespace, a namespaced one without a namespace gets the
/// destination's (when it has `metadata`); an object without a name (`generateName`) keeps an
/// empty name.
pub(crate) fn desired_ref(obj: &Value, scopes: &Scopes, namespace: &str) -> ObjectRef {
    let mut r = object_ref(obj);
    if scopes.is_cluster_scoped(&r.group, &r.kind) {
        r.namespace.clear();
    } else if r.namespace.is_empty()
        && !namespace.is_empty()
        && obj.get("metadata").is_some_and(Value::is_object)
    {
        r.namespace = namespace.to_string();
    }
    r
}

/// The identity a live object pairs by: a cluster-scoped kind has no namespace.
pub(crate) fn live_ref(obj: &Value, scopes: &Scopes) -> ObjectRef {
    let mut r = object_ref(obj);
    if scopes.is_cluster_scoped(&r.group, &r.kind) {
        r.namespace.clear();
    }
    r
}

/// The identity of an object, with an empty name for a `generateName` object (Argo CD keys
/// those by their empty name): [`ObjectRef::from_object_lossy`] without its `generateName`
/// fallback, `metadata` looked up once (`tests::object_ref_is_the_lossy_ref_without_generate_name`).
pub(crate) fn object_ref(obj: &Value) -> ObjectRef {
    fn text(v: Option<&Value>) -> &str {
        v.and_then(Value::as_str).unwrap_or("")
    }
    let (group, version) = crate::object::split_api_version(text(obj.get("apiVersion")));
    let meta = obj.get("metadata");
    let at = |key: &str| text(meta.and_then(|m| m.get(key)));
    ObjectRef::new(group, version, text(obj.get("kind")), at("namespace"), at("name"))
}

/// The pairing key of an identity: group, kind, namespace, name.
pub(crate) fn pair_key(r: &ObjectRef) -> (&str, &str, &str, &str) {
    (&r.group, &r.kind, &r.namespace, &r.name)
}

impl<'v> ManagedLive<'v> {
    /// Sorts live objects (a namespace dump, `kubectl get all`) into the app's and the others,
    /// as Argo CD's cluster cache does (see the module documentation): the live copies of the
    /// `desired` objects (hooks included), and the objects tracked for the app without an owner.
    ///
    /// # Examples
    ///
    /// ```
    /// use gitops_core::config::{Application, Settings};
    /// use gitops_core::object::Scopes;
    /// use gitops_core::ownership::ManagedLive;
    /// use serde_json::json;
    /// let app = Application::from_value(&json!({"metadata": {"name": "shop"},
    ///     "spec": {"destination": {"namespace": "shop"}}})).unwrap();
    /// let live = [
    ///     json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "old",
    ///         "namespace": "shop", "annotations":
    ///         {"argocd.argoproj.io/tracking-id": "shop:/ConfigMap:shop/old"}}}),
    ///     json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///         "metadata": {"name": "kube-root-ca.crt", "namespace": "shop"}}),
    /// ];
    /// let sorted = ManagedLive::new(&[], &live, &app, &Settings::default(), &Scopes::builtin());
    /// assert_eq!(sorted.managed, [&live[0]]);
    /// assert_eq!(sorted.unmanaged[0].object.name, "kube-root-ca.crt");
    /// ```
    pub fn new(
        desired: &[Value],
        live: &'v [Value],
        app: &Application,
        settings: &Settings,
        scopes: &Scopes,
    ) -> ManagedLive<'v> {
        let namespace = app.spec.destination.namespace.as_str();
        let refs: Vec<ObjectRef> = desired
            .iter()
            .map(|d| desired_ref(d, scopes, namespace))
            .filter(|r| !excluded(r, app, settings))
            .collect();
        let targets: BTreeSet<_> =
            refs.iter().filter(|r| !r.name.is_empty()).map(pair_key).collect();
        let (managed, unmanaged) = sort_live(live, |k| targets.contains(&k), app, settings, scopes);
        ManagedLive { managed: managed.into_iter().map(|(_, obj)| obj).collect(), unmanaged }
    }
}

/// [`ManagedLive::new`] given whether a pairing key is desired (named desired objects, excluded
/// kinds left out), each managed object with the identity it pairs by ([`live_ref`]), read
/// once: the app diff pairs by it. The objects are lent or owned (`diff_app_owned`'s are
/// handed over: the managed ones are moved into the answer, the others dropped).
pub(crate) fn sort_live<T: std::borrow::Borrow<Value>>(
    live: impl IntoIterator<Item = T>,
    desired: impl Fn((&str, &str, &str, &str)) -> bool,
    app: &Application,
    settings: &Settings,
    scopes: &Scopes,
) -> (Vec<(ObjectRef, T)>, Vec<Unmanaged>) {
    let instance = app.instance_name(settings);
    let (mut managed, mut unmanaged) = (Vec::new(), Vec::new());
    for obj in live {
        let r = live_ref(obj.borrow(), scopes);
        let desired = desired(pair_key(&r));
        match sort_one(obj.borrow(), &r, desired, &instance, app, settings) {
            Ok(()) => managed.push((r, obj)),
            Err(reason) => unmanaged.push(Unmanaged { object: r, reason }),
        }
    }
    unmanaged.sort();
    (managed, unmanaged)
}

/// Whether one live object (identity `r`, `desired` when a desired object pairs with it) is
/// the app's, as [`ManagedLive::new`] decides it: `Ok`, or why not.
pub(crate) fn sort_one(
    obj: &Value,
    r: &ObjectRef,
    desired: bool,
    instance: &str,
    app: &Application,
    settings: &Settings,
) -> Result<(), Unclaimed> {
    if excluded(r, app, settings) {
        return Err(Unclaimed::Excluded);
    }
    if let Some(selector) = settings.unwatched(obj, &app.spec.destination.server) {
        return Err(Unclaimed::Unwatched { selector });
    }
    if desired {
        return Ok(());
    }
    claim(obj, instance, settings)
}

/// The notes a comparison gives about the objects it left out: one per reason (one per other
/// app), each naming every object, sorted.
pub(crate) fn notes(unmanaged: &[Unmanaged]) -> Vec<String> {
    let mut by_reason: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for u in unmanaged {
        let (why, what) = match &u.reason {
            Unclaimed::Owned { owner } => (
                "owned by another object (ownerReferences)".to_string(),
                format!("{} ({owner})", u.object),
            ),
            Unclaimed::TrackedByOther { app } => (
                format!("tracked by application `{}`", app.replace('_', "/")),
                u.object.to_string(),
            ),
            Unclaimed::Untracked => ("tracked by no application".to_string(), u.object.to_string()),
            Unclaimed::NoAppName => (
                "not desired, and the application has no name to track them by".to_string(),
                u.object.to_string(),
            ),
            Unclaimed::Excluded => {
                ("their kinds are excluded in the settings".to_string(), u.object.to_string())
            }
            Unclaimed::Unwatched { selector } => (
                format!(
                    "not watched, their labels do not match the resource selector \"{selector}\""
                ),
                u.object.to_string(),
            ),
            Unclaimed::NotPermitted { project } => {
                (format!("not permitted in project `{project}`"), u.object.to_string())
            }
        };
        by_reason.entry(why).or_default().push(what);
    }
    by_reason
        .into_iter()
        .map(|(why, objects)| format!("not compared or pruned, {why}: {}", objects.join(", ")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_cut_at_63_and_end_alphanumeric() {
        let long = format!("{}-{}", "a".repeat(62), "b".repeat(10));
        assert_eq!(truncate_label(&long), Some("a".repeat(62).as_str()));
        assert_eq!(truncate_label("short-"), Some("short-"));
        assert_eq!(truncate_label(&"-".repeat(70)), None);
    }

    /// The way `object_ref` read identities before: the lossy reading (a `generateName` for
    /// a missing name), the name then emptied unless `metadata.name` is a non-empty string.
    fn object_ref_by_lossy_ref(obj: &Value) -> ObjectRef {
        let mut r = ObjectRef::from_object_lossy(obj);
        let name = obj.get("metadata").and_then(|m| m.get("name"));
        if name.and_then(Value::as_str).is_none_or(str::is_empty) {
            r.name = String::new();
        }
        r
    }

    /// Every combination of an apiVersion, a kind and a metadata (missing, not a mapping, or
    /// with a name, generateName and namespace each missing, empty, a string or a number)
    /// gives the identity the lossy reading gave.
    #[test]
    fn object_ref_is_the_lossy_ref_without_generate_name() {
        use serde_json::json;
        let texts = [None, Some(json!("")), Some(json!("web")), Some(json!(7))];
        let versions =
            [None, Some(json!("v1")), Some(json!("apps/v1")), Some(json!("a/b/c")), Some(json!(1))];
        let mut metas = vec![None, Some(json!(null)), Some(json!("m")), Some(json!([1]))];
        for name in &texts {
            for generate in &texts {
                for namespace in &texts {
                    let mut m = serde_json::Map::new();
                    for (k, v) in
                        [("name", name), ("generateName", generate), ("namespace", namespace)]
                    {
                        if let Some(v) = v {
                            m.insert(k.to_owned(), v.clone());
                        }
                    }
                    metas.push(Some(Value::Object(m)));
                }
            }
        }
        let mut seen = 0;
        for version in &versions {
            for kind in &texts {
                for meta in &metas {
                    let mut obj = serde_json::Map::new();
                    for (k, v) in [("apiVersion", version), ("kind", kind), ("metadata", meta)] {
                        if let Some(v) = v {
                            obj.insert(k.to_owned(), v.clone());
                        }
                    }
                    let obj = Value::Object(obj);
                    assert_eq!(object_ref(&obj), object_ref_by_lossy_ref(&obj), "{obj}");
                    seen += 1;
                }
            }
        }
        for odd in [json!(null), json!("x"), json!([{"kind": "A"}])] {
            assert_eq!(object_ref(&odd), object_ref_by_lossy_ref(&odd));
        }
        assert_eq!(seen, 5 * 4 * 68);
    }

    #[test]
    fn tracking_ids_parse_as_argo_cd_does() {
        let id = TrackingId::parse("shop:apps/Deployment:shop/web").unwrap();
        assert_eq!(
            (id.app, id.group, id.kind, id.namespace, id.name),
            ("shop", "apps", "Deployment", "shop", "web")
        );
        assert_eq!(TrackingId::parse("shop:/ConfigMap:web"), None);
        assert_eq!(TrackingId::parse("shop:a/b/c:ns/x"), None);
        assert_eq!(TrackingId::parse("shop"), None);
        let id = TrackingId::parse("shop:/ConfigMap:ns/a:b").unwrap();
        assert_eq!(id.name, "a:b");
    }
}
