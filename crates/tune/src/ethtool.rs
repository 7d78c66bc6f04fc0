//! NIC facts that only the ethtool ioctl gives: driver, ring sizes,
//! offloads and interrupt coalescing. The legacy fixed-size commands are
//! used because every driver that speaks ethtool at all answers them.

use std::os::fd::AsRawFd;

use serde::{Deserialize, Serialize};

/// What the ethtool ioctls say of an interface.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EthtoolFacts {
    /// The driver's name.
    pub driver: Option<String>,
    /// Its PCI address.
    pub bus_info: Option<String>,
    /// Ring sizes, where the driver tells them.
    pub rings: Option<Rings>,
    /// Offloads, where the driver tells them.
    pub offloads: Option<Offloads>,
    /// Interrupt coalescing, where the driver tells it.
    pub coalesce: Option<Coalesce>,
    /// Why nothing could be read at all (no such device, no ethtool support).
    pub error: Option<String>,
}

impl EthtoolFacts {
    /// Facts that say only why none could be read.
    pub fn unreadable(reason: &str) -> EthtoolFacts {
        EthtoolFacts {
            error: Some(reason.to_string()),
            ..EthtoolFacts::default()
        }
    }
}

/// An interface's ring sizes, descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rings {
    /// Receive ring now.
    pub rx: u32,
    /// The largest receive ring the NIC takes.
    pub rx_max: u32,
    /// Transmit ring now.
    pub tx: u32,
    /// The largest transmit ring the NIC takes.
    pub tx_max: u32,
}

/// Segmentation and receive offloads, on or off.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Offloads {
    /// TCP segmentation offload.
    pub tso: Option<bool>,
    /// Generic segmentation offload.
    pub gso: Option<bool>,
    /// Generic receive offload.
    pub gro: Option<bool>,
    /// Large receive offload.
    pub lro: Option<bool>,
}

/// Interrupt coalescing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Coalesce {
    /// µs a receive interrupt waits.
    pub rx_usecs: u32,
    /// Frames a receive interrupt waits for.
    pub rx_frames: u32,
    /// The driver adapts receive coalescing.
    pub adaptive_rx: bool,
    /// The driver adapts transmit coalescing.
    pub adaptive_tx: bool,
}

const SIOCETHTOOL: libc::c_ulong = 0x8946;
const GDRVINFO: u32 = 0x03;
const GCOALESCE: u32 = 0x0e;
const GRINGPARAM: u32 = 0x10;
const GTSO: u32 = 0x1e;
const GGSO: u32 = 0x23;
const GFLAGS: u32 = 0x25;
const GGRO: u32 = 0x2b;
const FLAG_LRO: u32 = 1 << 15;

/// Words in `struct ethtool_drvinfo` (196 bytes).
const DRVINFO_WORDS: usize = 49;
/// Words in `struct ethtool_coalesce` (cmd + 22 fields).
const COALESCE_WORDS: usize = 23;
/// Words in `struct ethtool_ringparam` (cmd + 8 fields).
const RING_WORDS: usize = 9;

/// Everything the ioctls tell about `iface`; parts a driver does not
/// support are `None`.
pub fn query(iface: &str) -> EthtoolFacts {
    let sock = match socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None) {
        Ok(s) => s,
        Err(e) => return EthtoolFacts::unreadable(&format!("socket: {e}")),
    };
    let fd = sock.as_raw_fd();
    let mut facts = EthtoolFacts::default();
    let mut drv = [0u32; DRVINFO_WORDS];
    drv[0] = GDRVINFO;
    // Loopback and some virtual devices have no driver info but do answer
    // the feature queries, so a failure here is only final if all fail.
    let drvinfo = ethtool_ioctl(fd, iface, &mut drv);
    match &drvinfo {
        Ok(()) => {
            let bytes: Vec<u8> = drv.iter().flat_map(|w| w.to_ne_bytes()).collect();
            // driver at byte 4, version 36, fw 68, bus_info 100, each 32 bytes.
            facts.driver = c_string(&bytes[4..36]);
            facts.bus_info = c_string(&bytes[100..132]);
        }
        Err(e) if e.raw_os_error() == Some(libc::ENODEV) => {
            facts.error = Some(format!("no such device: {e}"));
            return facts;
        }
        Err(_) => {}
    }
    let mut ring = [0u32; RING_WORDS];
    ring[0] = GRINGPARAM;
    if ethtool_ioctl(fd, iface, &mut ring).is_ok() {
        facts.rings = Some(Rings {
            rx_max: ring[1],
            tx_max: ring[4],
            rx: ring[5],
            tx: ring[8],
        });
    }
    let value = |cmd: u32| {
        let mut v = [cmd, 0u32];
        ethtool_ioctl(fd, iface, &mut v).ok().map(|()| v[1])
    };
    facts.offloads = Some(Offloads {
        tso: value(GTSO).map(|v| v != 0),
        gso: value(GGSO).map(|v| v != 0),
        gro: value(GGRO).map(|v| v != 0),
        lro: value(GFLAGS).map(|v| v & FLAG_LRO != 0),
    });
    let mut co = [0u32; COALESCE_WORDS];
    co[0] = GCOALESCE;
    if ethtool_ioctl(fd, iface, &mut co).is_ok() {
        facts.coalesce = Some(Coalesce {
            rx_usecs: co[1],
            rx_frames: co[2],
            adaptive_rx: co[10] != 0,
            adaptive_tx: co[11] != 0,
        });
    }
    let o = facts.offloads.unwrap_or(Offloads {
        tso: None,
        gso: None,
        gro: None,
        lro: None,
    });
    let nothing = [o.tso, o.gso, o.gro, o.lro].iter().all(Option::is_none)
        && facts.rings.is_none()
        && facts.coalesce.is_none();
    if let Err(e) = drvinfo
        && nothing
    {
        facts.offloads = None;
        facts.error = Some(format!("no ethtool support: {e}"));
    }
    facts
}

fn c_string(b: &[u8]) -> Option<String> {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    let s = String::from_utf8_lossy(&b[..end]).into_owned();
    (!s.is_empty()).then_some(s)
}

/// `struct ifreq` with `ifr_data`: 16 bytes of name, a pointer, padding to
/// the union's 24 bytes.
#[repr(C)]
struct IfReqData {
    name: [u8; libc::IFNAMSIZ],
    data: *mut libc::c_void,
    _pad: [u8; 16],
}

/// One SIOCETHTOOL call. `cmd[0]` holds the ethtool command and `cmd` must
/// be at least as long as that command's structure.
fn ethtool_ioctl(fd: i32, iface: &str, cmd: &mut [u32]) -> std::io::Result<()> {
    let name = iface.as_bytes();
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(&0) {
        return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
    }
    let needed = match cmd.first() {
        Some(&GDRVINFO) => DRVINFO_WORDS,
        Some(&GCOALESCE) => COALESCE_WORDS,
        Some(&GRINGPARAM) => RING_WORDS,
        Some(&(GTSO | GGSO | GFLAGS | GGRO)) => 2,
        _ => usize::MAX,
    };
    if cmd.len() < needed {
        return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
    }
    let mut req = IfReqData {
        name: [0; libc::IFNAMSIZ],
        data: cmd.as_mut_ptr().cast(),
        _pad: [0; 16],
    };
    req.name[..name.len()].copy_from_slice(name);
    // SAFETY: `req` is a valid ifreq with a NUL-terminated name, and its data
    // pointer refers to `cmd`, which was checked above to be at least as
    // large as the structure the kernel reads and writes for this command;
    // both outlive the call.
    let rc = unsafe { libc::ioctl(fd, SIOCETHTOOL as _, &mut req) };
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn loopback_answers_offloads_and_unknown_devices_fail_cleanly() {
        let lo = super::query("lo");
        assert_eq!(lo.error, None);
        assert!(lo.offloads.is_some());
        let none = super::query("lr-no-such0");
        assert!(none.error.is_some());
        assert!(super::query("").error.is_some());
        assert!(super::query("a-name-much-too-long").error.is_some());
    }
}
