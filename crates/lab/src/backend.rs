//! Which backend makes a lab's conditions on this kernel, and why: netem,
//! the user-space emulator, plain veth with a TBF rate, or kernel switches
//! with HTB classes, as asked (`--backend`) or chosen (`auto`).

use crate::LabError;
use crate::conditions::{Backend, BackendChoice};
use crate::detect::KernelSupport;
use crate::spec::LabSpec;

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
        BackendChoice::Netem if !k.netem => Err(LabError::Missing(
            "--backend netem: this kernel has no netem qdisc (sch_netem); use --backend emulator".into(),
        )),
        BackendChoice::Netem => c
            .fits(Backend::Netem)
            .map(|()| (Backend::Netem, "netem was asked for".into())),
        BackendChoice::Emulator if !k.tun => Err(LabError::Missing(
            "--backend emulator needs /dev/net/tun (CONFIG_TUN)".into(),
        )),
        BackendChoice::Emulator => Ok((Backend::Emulator, "the emulator was asked for".into())),
        BackendChoice::Veth if c.needs_emulation() => Err(LabError::Spec(
            "--backend veth makes only a rate (TBF); delay, jitter, loss, reordering and duplication need netem or the emulator".into(),
        )),
        BackendChoice::Veth if c.rate_bps.is_some() && !k.tbf => Err(LabError::Missing(
            "--rate on the veth backend needs the tbf qdisc, which this kernel lacks; use --backend emulator".into(),
        )),
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
        BackendChoice::Auto => Err(LabError::Missing(
            "this kernel has neither netem nor TUN; only --backend veth works here".into(),
        )),
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
        BackendChoice::Htb if !k.htb => Err(LabError::Missing(
            "--backend htb: this kernel has no HTB qdisc (sch_htb); use --backend emulator".into(),
        )),
        BackendChoice::Htb => Ok((
            Backend::Htb,
            "kernel switches with HTB classes were asked for (strict priority as HTB priority, \
             ETS weights as HTB quanta)"
                .into(),
        )),
        BackendChoice::Auto | BackendChoice::Emulator if k.tun => Ok((
            Backend::Emulator,
            "a fabric's switches (per-class queues, ETS, ECN, PFC pause) are made by the emulator".into(),
        )),
        BackendChoice::Auto | BackendChoice::Emulator => Err(LabError::Missing(
            "a --topology lab needs the emulator, and the emulator needs /dev/net/tun (CONFIG_TUN)".into(),
        )),
        BackendChoice::Netem | BackendChoice::Veth => Err(LabError::Spec(
            "--topology labs run on the emulator (--backend emulator or auto) or on kernel switches (--backend htb)".into(),
        )),
    }
}

/// The backend of a lab with several links: kernel links only, as the
/// emulator makes one device per host.
fn for_links(spec: &LabSpec, k: &KernelSupport) -> Result<(Backend, String), LabError> {
    let c = &spec.conditions;
    let one_device = "the emulator makes one link per host; parallel links are veth pairs";
    match spec.backend {
        BackendChoice::Emulator | BackendChoice::Htb => Err(LabError::Spec(format!(
            "--links: {one_device}, so use --backend veth (a rate per link) or netem"
        ))),
        BackendChoice::Netem if !k.netem => Err(LabError::Spec(
            "--backend netem: this kernel has no netem qdisc (sch_netem); use --backend veth"
                .into(),
        )),
        BackendChoice::Netem | BackendChoice::Auto if k.netem => c
            .fits(Backend::Netem)
            .map(|()| (Backend::Netem, "netem on every link".into())),
        BackendChoice::Veth | BackendChoice::Auto if c.needs_emulation() => {
            Err(LabError::Spec(format!(
                "--links with delay, jitter, loss, reordering or duplication needs netem, which \
             this kernel lacks ({one_device} with a rate at most)"
            )))
        }
        BackendChoice::Veth | BackendChoice::Auto if c.rate_bps.is_some() && !k.tbf => {
            Err(LabError::Spec(
                "--rate on parallel links needs the tbf qdisc, which this kernel lacks".into(),
            ))
        }
        BackendChoice::Veth => Ok((Backend::Veth, "plain veth was asked for".into())),
        BackendChoice::Auto => Ok((
            Backend::Veth,
            format!("{one_device} with a TBF rate each (this kernel has no netem)"),
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
