//! What the kernel will tell about a run.
//!
//! [`tcpinfo`] reads and decodes TCP_INFO, [`cpu`] accounts CPU time per thread,
//! per process and per host, [`cgroup`] reads the quota a process runs under, [`writeback`] what the page cache did to a writer, [`host`] collects the facts a result must carry,
//! [`snmp`] reads the host's UDP drop counters, [`one_way`] tells each direction's queueing apart from a bench's delay probes, [`members`] finds the
//! links a bond or a multipath route spreads flows over, and [`units`] writes
//! rates and sizes for people. What it all means is `linerate-verdict`'s.
#![warn(missing_docs)]

pub mod cgroup;
pub mod cpu;
pub mod host;
pub mod members;
pub mod one_way;
pub mod snmp;
pub mod tcpinfo;
pub mod units;
pub mod writeback;
