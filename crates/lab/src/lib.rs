//! Namespace testbeds on one Linux machine: hosts, an optional router,
//! parallel links and bonds, a switched fabric, and WAN conditions (delay,
//! jitter, loss, reordering, duplication, rate) made by tc/netem where the
//! kernel has it and by `linerate-emulator` where it does not; a fabric's
//! switches as kernel namespaces with HTB classes where the kernel can.
//! Everything a lab creates is recorded on disk so it can always be taken
//! down, also after a crash.
#![warn(missing_docs)]

pub mod backend;
pub mod conditions;
pub mod detect;
mod error;
mod exec;
mod ipcmd;
mod kernel_fabric;
pub mod lifecycle;
pub mod links;
pub mod netns;
pub mod spec;
pub mod state;
mod topology;

pub use conditions::{Backend, BackendChoice, Conditions};
pub use spec::{Lab, LabSpec};

pub use error::{EmulatorFailure, LabError, Missing, SpecError};
