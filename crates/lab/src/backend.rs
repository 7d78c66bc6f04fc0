//! Which backend makes a lab's conditions on this kernel, and why: netem,
//! the user-space emulator, plain veth with a TBF rate, or kernel switches
//! with HTB classes, as asked (`--backend`) or chosen (`auto`).

use crate::conditions::{Backend, BackendChoice};
use crate::detect::KernelSupport;
use crate::spec::LabSpec;
use crate::{LabError, Missing, SpecError};

/// The backend that makes `spec` on a kernel that offers `k`, and why.
pub fn choose(spec: &LabSpec, k: &KernelSupport) -> Result<(Backend, String), LabError> {
    if spec.fabric.is_some() {
        return choose_fabric(spec, k);
    }
    if spec.links > 1 {
        return for_links(spec, k);
    }
    let c = &spec.conditions;
    match spec.backend {
        BackendChoice::Netem if !k.netem => Err(Missing::Netem.into()),
        BackendChoice::Netem => c
            .fits(Backend::Netem)
            .map(|()| (Backend::Netem, "netem was asked for".into())),
        BackendChoice::Emulator if !k.tun => Err(Missing::Tun.into()),
        BackendChoice::Emulator => Ok((Backend::Emulator, "the emulator was asked for".into())),
        BackendChoice::Veth if c.needs_emulation() => Err(SpecError::VethEmulates.into()),
        BackendChoice::Veth if c.rate_bps.is_some() && !k.tbf => Err(Missing::Tbf.into()),
        BackendChoice::Veth => Ok((Backend::Veth, "plain veth was asked for".into())),
        BackendChoice::Auto if k.netem && c.fits(Backend::Netem).is_ok() => {
            Ok((Backend::Netem, "the kernel has netem".into()))
        }
        BackendChoice::Auto if k.netem && k.tun => Ok((
            Backend::Emulator,
            "netem would send reordered packets past the whole delay line; the emulator \
             displaces them by a few packets"
                .into(),
        )),
        BackendChoice::Auto if k.tun => Ok((
            Backend::Emulator,
            "the kernel has no netem qdisc; the user-space emulator makes the conditions".into(),
        )),
        BackendChoice::Auto => Err(Missing::NetemAndTun.into()),
        // `Lab::plan` says why a lab without a --topology has no switches to build.
        BackendChoice::Htb => Ok((Backend::Htb, String::new())),
    }
}

/// A fabric's switches: the emulator makes every feature (classes, ECN,
/// PFC pause, hop delay); kernel switches with HTB classes (`--backend htb`)
/// forward faster but have no pause frames or marking, so they are chosen
/// only when asked for.
/// A fabric's backend: the emulator's switches, or kernel ones with HTB.
fn choose_fabric(spec: &LabSpec, k: &KernelSupport) -> Result<(Backend, String), LabError> {
    match spec.backend {
        BackendChoice::Htb if !k.htb => Err(Missing::Htb.into()),
        BackendChoice::Htb => Ok((
            Backend::Htb,
            "kernel switches with HTB classes were asked for (strict priority as HTB priority, \
             ETS weights as HTB quanta)"
                .into(),
        )),
        BackendChoice::Auto | BackendChoice::Emulator if k.tun => Ok((
            Backend::Emulator,
            "a fabric's switches (per-class queues, ETS, ECN, PFC pause) are made by the emulator"
                .into(),
        )),
        BackendChoice::Auto | BackendChoice::Emulator => Err(Missing::TunForFabric.into()),
        BackendChoice::Netem | BackendChoice::Veth => Err(SpecError::FabricBackend.into()),
    }
}

/// The backend of a lab with several links: kernel links only, as the
/// emulator makes one device per host.
fn for_links(spec: &LabSpec, k: &KernelSupport) -> Result<(Backend, String), LabError> {
    let c = &spec.conditions;
    match spec.backend {
        BackendChoice::Emulator | BackendChoice::Htb => Err(SpecError::LinksBackend.into()),
        BackendChoice::Netem if !k.netem => Err(SpecError::LinksNetem.into()),
        BackendChoice::Netem | BackendChoice::Auto if k.netem => c
            .fits(Backend::Netem)
            .map(|()| (Backend::Netem, "netem on every link".into())),
        BackendChoice::Veth | BackendChoice::Auto if c.needs_emulation() => {
            Err(SpecError::LinksEmulate.into())
        }
        BackendChoice::Veth | BackendChoice::Auto if c.rate_bps.is_some() && !k.tbf => {
            Err(SpecError::LinksTbf.into())
        }
        BackendChoice::Veth => Ok((Backend::Veth, "plain veth was asked for".into())),
        BackendChoice::Auto => Ok((
            Backend::Veth,
            "the emulator makes one link per host; parallel links are veth pairs with a TBF rate each (this kernel has no netem)".into(),
        )),
        BackendChoice::Netem => unreachable!("netem without netem is refused above"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(backend: BackendChoice) -> LabSpec {
        crate::lifecycle::tests::spec(backend, false)
    }

    #[test]
    fn auto_picks_netem_when_present_and_the_emulator_otherwise() {
        let with = KernelSupport {
            netem: true,
            tbf: true,
            htb: true,
            tun: true,
            bonding: false,
        };
        let without = KernelSupport {
            netem: false,
            ..with.clone()
        };
        assert_eq!(
            choose(&spec(BackendChoice::Auto), &with).unwrap().0,
            Backend::Netem
        );
        assert_eq!(
            choose(&spec(BackendChoice::Auto), &without).unwrap().0,
            Backend::Emulator
        );
        assert!(choose(&spec(BackendChoice::Netem), &without).is_err());
        assert!(
            choose(&spec(BackendChoice::Veth), &with).is_err(),
            "veth cannot delay"
        );
    }
}
