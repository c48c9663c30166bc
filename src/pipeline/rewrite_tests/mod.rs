//! The rewriter's tests on analysed kernels: they live above the stages they drive.
mod forms;
mod soa;
