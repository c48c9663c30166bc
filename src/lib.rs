//! bankwise: finds shared-memory bank conflicts in CUDA source and rewrites kernels to remove
//! them. Stages: [`parse`] → [`block`] (launch shapes) → [`affine`] → [`cost`] → [`solve`] →
//! [`rewrite`] → [`report`]; [`prebuild`] runs the rewriter in front of nvcc; [`explain`]
//! draws one access for teaching.
pub mod affine;
pub mod analysis;
pub mod bank;
pub mod bench;
pub mod block;
pub mod config;
pub mod cost;
pub mod explain;
pub mod parallel;
pub mod parse;
pub mod prebuild;
pub mod report;
pub mod rewrite;
pub mod solve;
