//! Writing files so that nothing is lost (docs/ARCHITECTURE.md §8): through a temporary file
//! beside the target, fsynced, renamed over it; through a symlink to its target; never over a
//! FIFO, a device, a directory or a file with other hard links; with the target's mode,
//! owner, extended attributes and POSIX ACL; never over a file that changed since it was read (an edit made meanwhile would be
//! lost); and with the temporary file removed when SIGINT or SIGTERM ends the run.
use bankwise::parse::file_kind;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Temporary files being written, removed by the signal handler.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Exit status after SIGINT or SIGTERM, as shells report a signal (128 + SIGINT).
const EXIT_INTERRUPTED: i32 = 130;

/// Installs the handler that removes the temporary files in flight on SIGINT and SIGTERM and
/// ends the run. A handler that cannot be installed leaves the default (the files are then
/// left behind, named `.NAME.bankwise-*.tmp`).
pub fn remove_temporaries_on_signals() {
    let _ = ctrlc::set_handler(|| {
        let paths = match TEMPORARIES.lock() {
            Ok(paths) => paths.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        for path in paths {
            let _ = std::fs::remove_file(path);
        }
        std::process::exit(EXIT_INTERRUPTED);
    });
}

fn unregister(path: &Path) {
    if let Ok(mut paths) = TEMPORARIES.lock() {
        paths.retain(|p| p != path);
    }
}

/// Where a write to `target` goes: the file itself, or the file a symlink leads to (the link
/// stays). Refused: a dangling link, anything but a regular file, a file with other hard
/// links (the rename would give it a new inode and leave them with the old text), a
/// read-only file.
fn destination(target: &Path) -> Result<(PathBuf, Option<std::fs::Metadata>), String> {
    let link = std::fs::symlink_metadata(target).ok();
    let resolved = match &link {
        Some(m) if m.file_type().is_symlink() => std::fs::canonicalize(target)
            .map_err(|err| format!("a symlink whose target cannot be reached ({err})"))?,
        _ => target.to_path_buf(),
    };
    let Ok(metadata) = std::fs::metadata(&resolved) else {
        return Ok((resolved, None));
    };
    if !metadata.is_file() {
        return Err(format!(
            "not a regular file ({}); leave out -o to write to stdout",
            file_kind(&metadata)
        ));
    }
    if metadata.nlink() > 1 {
        return Err(format!(
            "the file has {} hard links, which a replacement would break; write with -o to \
             another file",
            metadata.nlink()
        ));
    }
    if metadata.permissions().readonly() {
        return Err("the file is read-only".into());
    }
    Ok((resolved, Some(metadata)))
}

/// Writes `text` to `target` (see the module's documentation). `in_place` holds the bytes
/// the file had when it was read: the write keeps the existing file's mode and owner, and is
/// refused when the file no longer holds them. Without it, a new output file gets the usual
/// mode.
pub fn write_file(target: &Path, text: &[u8], in_place: Option<&[u8]>) -> Result<(), String> {
    let nothing = |why: String| format!("{why}; nothing written");
    let (destination, existing) = destination(target).map_err(nothing)?;
    let dir = match destination.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = destination
        .file_name()
        .map_or("output".into(), |n| n.to_string_lossy().into_owned());
    let prefix = format!(".{name}.bankwise-");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // Created under the lock, so that a signal between the creation and the registration
    // cannot leave the file behind.
    let mut temporary = {
        let mut paths = TEMPORARIES
            .lock()
            .map_err(|_| nothing("a lock failed".into()))?;
        // A new file gets what the umask leaves of 0666, as a shell's `>` gives it.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
        let temporary = builder
            .tempfile_in(dir)
            .map_err(|err| nothing(format!("cannot create a file beside it: {err}")))?;
        paths.push(temporary.path().to_path_buf());
        temporary
    };
    let written = (|| {
        temporary.write_all(text)?;
        if let (Some(metadata), None) = (&existing, in_place) {
            // `-o` over a file: its mode, as `>` keeps it.
            temporary
                .as_file()
                .set_permissions(metadata.permissions())?;
        }
        if let (Some(metadata), Some(_)) = (&existing, in_place) {
            // Set after creation, where the umask does not apply.
            temporary
                .as_file()
                .set_permissions(metadata.permissions())?;
            keep_owner(temporary.as_file(), metadata)?;
            // After the mode: an ACL sets the group bits from its mask, as the original's did.
            keep_xattrs(&destination, temporary.as_file())?;
        }
        temporary.as_file().sync_all()
    })();
    let path = temporary.path().to_path_buf();
    let cannot = |err: std::io::Error| format!("cannot write: {err}");
    let result = written.map_err(cannot).and_then(|()| {
        // Last before the rename, so that the window in which an edit could still be lost
        // is as short as it can be without a lock, which editors do not take.
        if let Some(original) = in_place {
            unchanged(&destination, existing.as_ref(), original)?;
        }
        temporary
            .persist(&destination)
            .map(|_| ())
            .map_err(|err| cannot(err.error))
    });
    // Dropped, the temporary file (when not renamed) is removed.
    unregister(&path);
    result.map_err(nothing)?;
    // The rename is durable once the directory is.
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// `Ok` when the file at `destination` is still the one `existing` describes (same device and
/// inode: an editor that saves by renaming makes a new one) and holds `original`, the bytes
/// bankwise read and fixed; else the error that refuses the write.
fn unchanged(
    destination: &Path,
    existing: Option<&std::fs::Metadata>,
    original: &[u8],
) -> Result<(), String> {
    use std::io::Read;
    let changed = || "changed while bankwise was fixing it".to_string();
    let cannot = |err: std::io::Error| format!("cannot read it again to compare: {err}");
    let Some(existing) = existing else {
        // It was read, so it existed: it has been removed since.
        return Err(changed());
    };
    let file = match std::fs::File::open(destination) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(changed()),
        Err(err) => return Err(cannot(err)),
    };
    let now = file.metadata().map_err(cannot)?;
    if (now.dev(), now.ino()) != (existing.dev(), existing.ino())
        || now.len() != original.len() as u64
    {
        return Err(changed());
    }
    // One byte more than expected, so that text appended meanwhile is seen.
    let mut current = Vec::with_capacity(original.len() + 1);
    file.take(original.len() as u64 + 1)
        .read_to_end(&mut current)
        .map_err(cannot)?;
    if current != original {
        return Err(changed());
    }
    Ok(())
}

/// Gives `file` the extended attributes of the file at `original`: `user.*`, and
/// `system.posix_acl_access`, which holds its POSIX ACL (`system.nfs4_acl` on NFS). What cannot be read (a filesystem
/// without them, `trusted.*` for anyone but root) is not copied; a `user.*` attribute or an
/// ACL that was read and cannot be set refuses the write, since the file would lose it.
fn keep_xattrs(original: &Path, file: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let source = std::fs::File::open(original)?;
    let Some(names) = xattr_names(&source)? else {
        return Ok(());
    };
    for name in names.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let Ok(c_name) = std::ffi::CString::new(name) else {
            continue;
        };
        let Some(value) = xattr_value(&source, &c_name) else {
            continue;
        };
        // SAFETY: `c_name` is a NUL-terminated name and `value` a live buffer of its length.
        let set = unsafe {
            libc::fsetxattr(
                file.as_raw_fd(),
                c_name.as_ptr(),
                value.as_ptr().cast(),
                value.len(),
                0,
            )
        };
        // A user's own attributes and an ACL (POSIX, or NFSv4 on NFS) guard or describe the
        // file: losing one silently is what this refuses. `security.*` is the system's to
        // set on a new file, and `trusted.*` root's.
        let must_keep = name.starts_with(b"user.")
            || name.starts_with(b"system.posix_acl_")
            || name == b"system.nfs4_acl";
        if set != 0 && must_keep {
            let err = std::io::Error::last_os_error();
            return Err(std::io::Error::new(
                err.kind(),
                format!(
                    "cannot keep the extended attribute {} ({err})",
                    String::from_utf8_lossy(name)
                ),
            ));
        }
    }
    Ok(())
}

/// Whether an error of the xattr calls says the filesystem has no extended attributes.
fn unsupported(err: &std::io::Error) -> bool {
    matches!(err.raw_os_error(), Some(libc::ENOTSUP | libc::ENOSYS))
}

/// The NUL-separated names of `file`'s extended attributes; `None` where the filesystem has
/// none.
fn xattr_names(file: &std::fs::File) -> std::io::Result<Option<Vec<u8>>> {
    use std::os::fd::AsRawFd;
    // Asked for the size first; an attribute added in between makes the second call fail
    // with ERANGE, and then it is asked again.
    for _ in 0..8 {
        // SAFETY: a null buffer of size 0 asks only for the size.
        let size = unsafe { libc::flistxattr(file.as_raw_fd(), std::ptr::null_mut(), 0) };
        if size < 0 {
            let err = std::io::Error::last_os_error();
            return if unsupported(&err) {
                Ok(None)
            } else {
                Err(err)
            };
        }
        let mut names = vec![0u8; size as usize];
        // SAFETY: `names` is a live buffer of the length given.
        let got =
            unsafe { libc::flistxattr(file.as_raw_fd(), names.as_mut_ptr().cast(), names.len()) };
        if got >= 0 {
            names.truncate(got as usize);
            return Ok(Some(names));
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ERANGE) {
            return if unsupported(&err) {
                Ok(None)
            } else {
                Err(err)
            };
        }
    }
    Err(std::io::Error::other(
        "its extended attributes kept changing",
    ))
}

/// The value of `file`'s attribute `name`; `None` when it cannot be read (a namespace only
/// root may read, or an attribute removed meanwhile).
fn xattr_value(file: &std::fs::File, name: &std::ffi::CStr) -> Option<Vec<u8>> {
    use std::os::fd::AsRawFd;
    for _ in 0..8 {
        // SAFETY: a null buffer of size 0 asks only for the size.
        let size =
            unsafe { libc::fgetxattr(file.as_raw_fd(), name.as_ptr(), std::ptr::null_mut(), 0) };
        if size < 0 {
            return None;
        }
        let mut value = vec![0u8; size as usize];
        // SAFETY: `value` is a live buffer of the length given.
        let got = unsafe {
            libc::fgetxattr(
                file.as_raw_fd(),
                name.as_ptr(),
                value.as_mut_ptr().cast(),
                value.len(),
            )
        };
        if got >= 0 {
            value.truncate(got as usize);
            return Some(value);
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::ERANGE) {
            return None;
        }
    }
    None
}

/// Gives `file` the owner and group of the file it replaces. Only root may give a file to
/// someone else: when that is needed and not allowed, the write is refused rather than
/// changing the owner.
fn keep_owner(file: &std::fs::File, original: &std::fs::Metadata) -> std::io::Result<()> {
    let current = file.metadata()?;
    if (current.uid(), current.gid()) == (original.uid(), original.gid()) {
        return Ok(());
    }
    std::os::unix::fs::fchown(file, Some(original.uid()), Some(original.gid())).map_err(|err| {
        std::io::Error::new(
            err.kind(),
            format!(
                "cannot keep the file's owner {}:{} ({err})",
                original.uid(),
                original.gid()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::write_file;

    /// The names in `dir`, sorted.
    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("readable")
            .map(|entry| {
                entry
                    .expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn an_in_place_write_is_refused_when_the_file_changed_since_it_was_read() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("a.cu");
        // What bankwise read and fixed, then an edit made while it was fixing.
        std::fs::write(&path, "int a;\n// the user's edit\n").expect("written");
        let refused = write_file(&path, b"fixed\n", Some(b"int a;\n"));
        assert_eq!(
            refused,
            Err("changed while bankwise was fixing it; nothing written".to_string())
        );
        assert_eq!(
            std::fs::read(&path).expect("readable"),
            b"int a;\n// the user's edit\n"
        );
        // The same length, other bytes; and the file replaced by another (an editor's save).
        std::fs::write(&path, "int b;\n").expect("written");
        assert!(write_file(&path, b"fixed\n", Some(b"int a;\n")).is_err());
        assert_eq!(names(dir.path()), ["a.cu"], "no temporary file is left");
        // Unchanged, it is written.
        assert_eq!(write_file(&path, b"fixed\n", Some(b"int b;\n")), Ok(()));
        assert_eq!(std::fs::read(&path).expect("readable"), b"fixed\n");
    }

    #[test]
    fn an_in_place_write_is_refused_when_the_file_was_removed_since_it_was_read() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("gone.cu");
        let refused = write_file(&path, b"fixed\n", Some(b"int a;\n"));
        assert!(refused.is_err_and(|why| why.contains("changed while bankwise")));
        assert!(!path.exists());
    }
}
