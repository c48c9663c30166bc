//! The compiler as a second front end: nvcc's PTX for a file, each kernel run for one block
//! with every thread interpreted, and every shared-memory instruction costed at the width
//! and on the path nvcc gave it. Loads nvcc hoisted out of a loop run once, neighbours it
//! merged into `ld.shared.v4` are one 16-byte access, and accesses the source analysis
//! gives up on (a type it cannot size, a pointer carved from `extern __shared__`, template
//! machinery) are here as nvcc understood them. PTX is what ptxas assembles one
//! instruction for one: each `ld.shared`/`st.shared` is one `LDS`/`STS`.

mod exec;
mod merge;
mod parse;

pub(crate) use exec::{Access, Gap, Launch, Run};
pub(crate) use parse::Module;

/// Reads a PTX listing.
pub(crate) fn read(text: &str) -> Module {
    parse::module(text)
}

/// The kernels of `module` (mangled names).
pub(crate) fn kernels(module: &Module) -> impl Iterator<Item = &str> {
    module
        .functions
        .iter()
        .filter(|f| f.is_kernel)
        .map(|f| f.name.as_str())
}

/// Runs block 0 of kernel `name`, its accesses merged as `sass` (the kernel's shared loads
/// and stores in the machine code, where known) shows; `None` when the module has no such
/// kernel.
pub(crate) fn run(
    module: &Module,
    name: &str,
    launch: &Launch,
    sass: &[crate::compiled::sass::SharedSite],
) -> Option<Run> {
    let function = module
        .functions
        .iter()
        .find(|f| f.is_kernel && f.name == name)?;
    let merges = merge::plan(function, &module.files, sass);
    Some(exec::run(module, function, launch, &merges))
}
