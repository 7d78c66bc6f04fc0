//! TUN devices with virtio-net headers and TCP segmentation offload, so the
//! kernel hands over and accepts 64 KiB super-packets instead of single segments.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::Path;

use rustix::fs::{Mode, OFlags};
use rustix::thread::{LinkNameSpaceType, move_into_link_name_space};

use super::packet::VNET_HDR_LEN;

#[repr(C)]
struct IfReqFlags {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Opens a TUN device named `name` inside the network namespace `netns`
/// (a file such as /run/netns/NAME). The device lives as long as the
/// returned descriptor: when the emulator dies the link goes with it.
pub fn open_in(netns: &Path, name: &str) -> io::Result<OwnedFd> {
    let home = File::open("/proc/thread-self/ns/net")?;
    let target = File::open(netns)?;
    move_into_link_name_space(target.as_fd(), Some(LinkNameSpaceType::Network))?;
    // A TUN device is created in the namespace of the thread that opens /dev/net/tun.
    let opened = open(name);
    move_into_link_name_space(home.as_fd(), Some(LinkNameSpaceType::Network))?;
    opened
}

fn open(name: &str) -> io::Result<OwnedFd> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "bad interface name",
        ));
    }
    let fd = rustix::fs::open(
        "/dev/net/tun",
        OFlags::RDWR | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut req = IfReqFlags {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI | libc::IFF_VNET_HDR) as libc::c_short,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF reads and writes a struct ifreq; `req` has its
    // layout (16-byte name, then a union whose first member is the flags,
    // 40 bytes in all) and outlives the call.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut req as *mut IfReqFlags) };
    check(rc)?;
    let hdr_len = VNET_HDR_LEN as libc::c_int;
    // SAFETY: TUNSETVNETHDRSZ reads one int through the pointer, which is valid for the call.
    let rc = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            libc::TUNSETVNETHDRSZ,
            &hdr_len as *const libc::c_int,
        )
    };
    check(rc)?;
    let offload = libc::TUN_F_CSUM | libc::TUN_F_TSO4 | libc::TUN_F_TSO6 | libc::TUN_F_TSO_ECN;
    // SAFETY: TUNSETOFFLOAD takes the feature bits by value, not through a pointer.
    let rc = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            libc::TUNSETOFFLOAD,
            offload as libc::c_ulong,
        )
    };
    check(rc)?;
    Ok(fd)
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
