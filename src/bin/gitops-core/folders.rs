//! Reading folders: the one place the tool lists a folder or walks a tree of them.
//!
//! Symbolic links are followed, so a link may stand for a file or a folder anywhere. Two
//! things are refused with an error naming the link: a link that leads back to a folder the
//! walk is already inside (a loop such as `a -> .`, which would otherwise never end), and,
//! where the caller confines the reading to a root, a link that leads outside it.

use std::path::{Path, PathBuf};

use crate::common::CliError;

/// One entry of a folder: its path and what it is, symbolic links followed (the error of a
/// link that cannot be followed).
pub type Entry = (PathBuf, std::io::Result<std::fs::Metadata>);

/// The entries of `dir`, sorted by path.
pub fn entries(dir: &Path) -> Result<Vec<Entry>, CliError> {
    let fail = |e: std::io::Error| CliError::Input(format!("{}: {e}", dir.display()));
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(fail)? {
        let p = entry.map_err(fail)?.path();
        let meta = std::fs::metadata(&p);
        out.push((p, meta));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// The real path of `p`, every link resolved, naming `p` when it cannot be resolved.
fn real(p: &Path) -> Result<PathBuf, CliError> {
    std::fs::canonicalize(p).map_err(|e| CliError::Input(format!("{}: {e}", p.display())))
}

/// Every file below `dir`, recursively, sorted by path (an entry that cannot be followed is
/// listed as a file: reading it names the error). A folder reached again through a symbolic
/// link while the walk is inside it is an error naming the link.
#[cfg_attr(not(feature = "lua"), allow(dead_code))]
pub fn walk(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let mut inside = vec![(real(dir)?, dir.to_path_buf())];
    let mut out = Vec::new();
    walk_below(dir, &mut inside, &mut out)?;
    Ok(out)
}

#[cfg_attr(not(feature = "lua"), allow(dead_code))]
fn walk_below(
    dir: &Path,
    inside: &mut Vec<(PathBuf, PathBuf)>,
    out: &mut Vec<PathBuf>,
) -> Result<(), CliError> {
    for (p, meta) in entries(dir)? {
        if !meta.is_ok_and(|m| m.is_dir()) {
            out.push(p);
            continue;
        }
        let target = real(&p)?;
        if let Some((_, ancestor)) = inside.iter().find(|(r, _)| *r == target) {
            return Err(CliError::Input(format!(
                "{}: a symbolic link loop: it leads back to {}",
                p.display(),
                ancestor.display()
            )));
        }
        inside.push((target, p.clone()));
        walk_below(&p, inside, out)?;
        inside.pop();
    }
    Ok(())
}

/// Refuses `p` when its real path (links resolved) is outside `root`'s.
pub fn confine(root: &Path, p: &Path) -> Result<(), CliError> {
    if real(p)?.starts_with(real(root)?) {
        Ok(())
    } else {
        Err(CliError::Input(format!(
            "{}: a symbolic link that leads outside {}",
            p.display(),
            root.display()
        )))
    }
}
