//! Writing files so that nothing is lost (docs/ARCHITECTURE.md §8): through a temporary file
//! beside the target, fsynced, renamed over it; through a symlink to its target; never over a
//! FIFO, a device, a directory or a file with other hard links; with the target's mode and
//! owner; and with the temporary file removed when SIGINT or SIGTERM ends the run.
use bankwise::parse::file_kind;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
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

/// Writes `text` to `target` (see the module's documentation). `in_place` keeps the
/// existing file's mode and owner; a new output file gets the usual mode.
pub fn write_file(target: &Path, text: &[u8], in_place: bool) -> Result<(), String> {
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
        let temporary = builder
            .tempfile_in(dir)
            .map_err(|err| nothing(format!("cannot create a file beside it: {err}")))?;
        paths.push(temporary.path().to_path_buf());
        temporary
    };
    let written = (|| {
        temporary.write_all(text)?;
        if let (Some(metadata), true) = (&existing, in_place) {
            // Set after creation, where the umask does not apply.
            temporary
                .as_file()
                .set_permissions(metadata.permissions())?;
            keep_owner(temporary.as_file(), metadata)?;
        }
        temporary.as_file().sync_all()
    })();
    let path = temporary.path().to_path_buf();
    let result = match written {
        Ok(()) => temporary
            .persist(&destination)
            .map(|_| ())
            .map_err(|err| err.error),
        // Dropping the temporary file removes it.
        Err(err) => Err(err),
    };
    unregister(&path);
    result.map_err(|err| nothing(format!("cannot write: {err}")))?;
    // The rename is durable once the directory is.
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
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
