//! How a many-host run sets up every connection it makes, flows' and
//! proxy-job ranks' alike; the coordinator hands it to each.

/// What every connection of a run is given: its marking for the network's
/// traffic classes and its congestion control.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionSetup {
    /// The TOS byte, when marked.
    pub tos: Option<u8>,
    /// The congestion control, when not the hosts' own.
    pub congestion: Option<String>,
}
