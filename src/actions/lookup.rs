//! Where action scripts come from: `argocd-cm` and a `resource_customizations/` directory.

use std::collections::BTreeMap;

use super::kinds::{self, Kind};
use crate::config::{ResourceActions, Settings};
use crate::glob::glob_match;

/// Where a kind's discovery or action comes from: a script, or a built-in.
#[derive(Debug, Clone)]
pub(super) enum Found {
    /// A Lua script.
    Script(ActionScript),
    /// A built-in kind (its discovery, or the action of the name asked for).
    Builtin(&'static Kind),
}

impl Found {
    /// How results and errors name it: the script's name, or
    /// `built-in <group>/<Kind>/actions/<what>` (`what` is `discovery` or the action).
    pub(super) fn name(&self, what: &str) -> String {
        match self {
            Found::Script(s) => s.name.clone(),
            Found::Builtin(k) => k.script_name(what),
        }
    }
}

/// One action or discovery script and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ActionScript {
    /// Where it came from: `argocd-cm <key> discovery.lua`, `argocd-cm <key> action <name>`,
    /// or the relative path of the file.
    pub name: String,
    /// The Lua source.
    pub source: String,
}

impl ActionScript {
    fn new(name: String, source: &str) -> Self {
        ActionScript { name, source: source.to_string() }
    }
}

/// The actions of one kind folder: `actions/discovery.lua` and `actions/<name>/action.lua`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Folder {
    /// The folder's path (`group/Kind`, `_.crossplane.io/_`).
    path: String,
    discovery: Option<String>,
    actions: BTreeMap<String, String>,
}

/// The action scripts of `argocd-cm` and of a `resource_customizations/`-style directory.
///
/// Scripts for a kind are found with the precedence of health scripts
/// ([`crate::health::HealthScripts`]):
///
/// 1. the `argocd-cm` override (`resource.customizations.actions.<group_Kind>`) whose key is
///    exactly `group/Kind`, then the first override in byte order whose key is a glob
///    matching it (Argo CD 3 reads only the exact key for actions; see `testdata/SKIPPED.md`);
/// 2. the directory's `group/Kind/actions/` folder, then the first folder in byte order whose
///    path holds `_` and matches with `_` read as `*`, segment by segment;
/// 3. with no folder for the kind, the built-in actions of the kinds Argo CD 3.6.2 ships
///    scripts for (on by default, [`ActionScripts::with_builtin_actions`]): a folder replaces
///    them, as a host's `resource_customizations/` replaces Argo CD's.
///
/// Discovery runs the override's `discovery.lua` alone, or, with `mergeBuiltinActions`, that
/// script and then the directory's (or the built-in). An action runs the override's
/// definition of that name, else the directory's `actions/<name>/action.lua` (or the
/// built-in), as Argo CD's `GetResourceAction` does.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use gitops_core::actions::ActionScripts;
///
/// let dir = BTreeMap::from([
///     ("apps/Deployment/actions/discovery.lua".to_string(), "return {restart = {}}".to_string()),
///     ("apps/Deployment/actions/restart/action.lua".to_string(), "return obj".to_string()),
///     ("apps/Deployment/health.lua".to_string(), "return nil".to_string()),
/// ]);
/// let scripts = ActionScripts::new().with_directory(&dir);
/// let found = scripts.discovery("apps", "Deployment");
/// assert_eq!(found[0].name, "apps/Deployment/actions/discovery.lua");
/// assert_eq!(scripts.action("apps", "Deployment", "restart").unwrap().source, "return obj");
/// assert!(scripts.action("apps", "Deployment", "scale").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionScripts {
    overrides: BTreeMap<String, ResourceActions>,
    exact: BTreeMap<String, Folder>,
    /// (segment globs, folder), sorted by path.
    wildcard: Vec<(Vec<String>, Folder)>,
    builtin: bool,
}

impl Default for ActionScripts {
    fn default() -> Self {
        ActionScripts {
            overrides: BTreeMap::new(),
            exact: BTreeMap::new(),
            wildcard: Vec::new(),
            builtin: true,
        }
    }
}

impl ActionScripts {
    /// No scripts; the built-in actions on.
    pub fn new() -> Self {
        ActionScripts::default()
    }

    /// The same with the built-in actions on (the default) or off: off, a kind has only the
    /// actions of `argocd-cm` and the directory.
    ///
    /// ```
    /// use gitops_core::actions::ActionScripts;
    /// assert!(ActionScripts::new().has_builtin("apps", "Deployment"));
    /// assert!(!ActionScripts::new().with_builtin_actions(false).has_builtin("apps", "Deployment"));
    /// ```
    #[must_use]
    pub fn with_builtin_actions(mut self, on: bool) -> Self {
        self.builtin = on;
        self
    }

    /// Whether the built-in actions of a kind are in use: they are on, the kind has them and
    /// no directory folder replaces them.
    pub fn has_builtin(&self, group: &str, kind: &str) -> bool {
        self.builtin_for(&crate::object::group_kind_key(group, kind), group, kind).is_some()
    }

    fn builtin_for(&self, key: &str, group: &str, kind: &str) -> Option<&'static Kind> {
        if self.find_folder(key).is_some() {
            return None;
        }
        self.builtin_kind(group, kind)
    }

    /// The built-in actions of a kind, when they are on (a folder may still replace them).
    fn builtin_kind(&self, group: &str, kind: &str) -> Option<&'static Kind> {
        if !self.builtin {
            return None;
        }
        kinds::find(group, kind)
    }

    /// The `actions` of `argocd-cm`.
    pub fn from_settings(settings: &Settings) -> Self {
        ActionScripts::new().with_settings(settings)
    }

    /// Adds (replaces) the `argocd-cm` actions.
    pub fn with_settings(mut self, settings: &Settings) -> Self {
        self.overrides = settings
            .overrides
            .iter()
            .filter_map(|(k, o)| o.actions.clone().map(|a| (k.clone(), a)))
            .collect();
        self
    }

    /// Adds the scripts of a directory in the layout of Argo CD's `resource_customizations/`:
    /// `files` maps each relative path (`/`-separated) to its text. Only
    /// `<group>/<Kind>/actions/discovery.lua` and `<group>/<Kind>/actions/<name>/action.lua`
    /// (or the same without the group folder) are scripts; everything else is ignored.
    pub fn with_directory(mut self, files: &BTreeMap<String, String>) -> Self {
        let mut folders: BTreeMap<String, Folder> = BTreeMap::new();
        for (path, text) in files {
            let rel = path.trim_start_matches("./");
            let Some((dir, rest)) = rel.split_once("/actions/") else { continue };
            let segments: Vec<&str> = dir.split('/').collect();
            if segments.len() > 2 || segments.iter().any(|s| s.is_empty()) {
                continue;
            }
            let folder = folders
                .entry(dir.to_string())
                .or_insert_with(|| Folder { path: dir.to_string(), ..Folder::default() });
            if rest == "discovery.lua" {
                folder.discovery = Some(text.clone());
            } else if let Some(name) = rest.strip_suffix("/action.lua")
                && !name.is_empty()
                && !name.contains('/')
            {
                folder.actions.insert(name.to_string(), text.clone());
            }
        }
        for (dir, folder) in folders {
            if dir.contains('_') {
                let globs = dir.split('/').map(|s| s.replace('_', "*")).collect();
                self.wildcard.push((globs, folder));
            } else {
                self.exact.insert(dir, folder);
            }
        }
        self.wildcard.sort_by(|a, b| a.1.path.cmp(&b.1.path));
        self
    }

    /// Whether there are no scripts at all (built-in actions are not scripts).
    pub fn is_empty(&self) -> bool {
        self.overrides.is_empty() && self.exact.is_empty() && self.wildcard.is_empty()
    }

    fn find_override(&self, key: &str) -> Option<(&String, &ResourceActions)> {
        self.overrides.get_key_value(key).or_else(|| {
            self.overrides.iter().find(|(k, _)| k.as_str() != key && glob_match(k, key))
        })
    }

    fn find_folder(&self, key: &str) -> Option<&Folder> {
        if let Some(f) = self.exact.get(key) {
            return Some(f);
        }
        let segments: Vec<&str> = key.split('/').collect();
        self.wildcard
            .iter()
            .find(|(globs, _)| {
                globs.len() == segments.len()
                    && globs.iter().zip(&segments).all(|(g, s)| glob_match(g, s))
            })
            .map(|(_, f)| f)
    }

    /// The discovery scripts for a kind, in the order they run (an earlier script's action
    /// wins over a later one of the same name); empty when the kind has no actions. Built-in
    /// actions are not scripts and are not listed.
    pub fn discovery(&self, group: &str, kind: &str) -> Vec<ActionScript> {
        self.discovery_sources(group, kind)
            .into_iter()
            .filter_map(|f| match f {
                Found::Script(s) => Some(s),
                Found::Builtin(_) => None,
            })
            .collect()
    }

    /// The discoveries for a kind, scripts and built-in, in the order they run.
    pub(super) fn discovery_sources(&self, group: &str, kind: &str) -> Vec<Found> {
        if self.is_empty() {
            // No scripts: the built-in, found without building the key.
            return self.builtin_kind(group, kind).map(Found::Builtin).into_iter().collect();
        }
        let key = crate::object::group_kind_key(group, kind);
        let mut out = Vec::new();
        if let Some((k, a)) = self.find_override(&key) {
            let name = format!("argocd-cm {k} discovery.lua");
            out.push(Found::Script(ActionScript::new(name, &a.discovery_lua)));
            if !a.merge_builtin_actions {
                return out;
            }
        }
        if let Some(f) = self.find_folder(&key)
            && let Some(source) = &f.discovery
        {
            let name = format!("{}/actions/discovery.lua", f.path);
            out.push(Found::Script(ActionScript::new(name, source)));
        } else if let Some(b) = self.builtin_for(&key, group, kind) {
            out.push(Found::Builtin(b));
        }
        out
    }

    /// The script of one action of a kind (`None` for a built-in action).
    pub fn action(&self, group: &str, kind: &str, action: &str) -> Option<ActionScript> {
        match self.action_source(group, kind, action)? {
            Found::Script(s) => Some(s),
            Found::Builtin(_) => None,
        }
    }

    /// Where one action of a kind comes from.
    pub(super) fn action_source(&self, group: &str, kind: &str, action: &str) -> Option<Found> {
        if self.is_empty() {
            let b = self.builtin_kind(group, kind)?;
            return b.action(action).map(|_| Found::Builtin(b));
        }
        let key = crate::object::group_kind_key(group, kind);
        if let Some((k, a)) = self.find_override(&key)
            && let Some(d) = a.definitions.iter().find(|d| d.name == action)
        {
            let name = format!("argocd-cm {k} action {action}");
            return Some(Found::Script(ActionScript::new(name, &d.action_lua)));
        }
        if let Some(f) = self.find_folder(&key) {
            let source = f.actions.get(action)?;
            let name = format!("{}/actions/{action}/action.lua", f.path);
            return Some(Found::Script(ActionScript::new(name, source)));
        }
        let b = self.builtin_for(&key, group, kind)?;
        b.action(action).map(|_| Found::Builtin(b))
    }
}
