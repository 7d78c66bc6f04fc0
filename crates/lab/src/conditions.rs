//! What a lab link looks like: the user's view (RTT, loss in per cent, rate)
//! and how it becomes per-direction impairments or tc arguments.

use serde::{Deserialize, Serialize};

use crate::SpecError;
use linerate_emulator::model::{DEFAULT_REORDER_DEPTH, Impairments, ReorderModel};

/// Which mechanism makes the conditions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// tc/netem qdiscs on the egress of each link.
    Netem,
    /// linerate's user-space emulator between TUN devices.
    Emulator,
    /// Plain veth links; a rate, if any, by TBF.
    Veth,
    /// A fabric of kernel switches: namespaces that route, HTB classes on
    /// every port.
    Htb,
}

impl Backend {
    /// The backend's name in flags and records.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Netem => "netem",
            Backend::Emulator => "emulator",
            Backend::Veth => "veth",
            Backend::Htb => "htb",
        }
    }
}

/// The backend a user asks for (`--backend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// netem when the kernel has it, else the emulator.
    Auto,
    /// The kernel's netem qdisc (refused where the kernel lacks it).
    Netem,
    /// linerate's user-space emulator over TUN devices.
    Emulator,
    /// Plain veth links: a rate (TBF), no delay or loss.
    Veth,
    /// A fabric's switches as kernel namespaces with HTB classes.
    Htb,
}

/// Link conditions, the same in both directions (delay is half the RTT each way).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Conditions {
    /// Round-trip time added (half each way).
    pub rtt_us: u64,
    /// Delay variation each way, plus or minus.
    pub jitter_us: u64,
    /// Probabilities, 0 to 1.
    pub loss: f64,
    /// Mean length of a loss burst in packets (1 or less: independent losses).
    pub loss_burst: f64,
    /// Probability that a packet is reordered.
    pub reorder: f64,
    /// How a reordered packet overtakes others (`--reorder-model`).
    #[serde(default)]
    pub reorder_model: ReorderModel,
    /// Packets a reordered one overtakes (`--reorder-depth`).
    #[serde(default = "default_reorder_depth")]
    pub reorder_depth: u32,
    /// Probability that a packet is duplicated.
    pub duplicate: f64,
    /// Bottleneck rate, bits/s; none for no limit.
    pub rate_bps: Option<u64>,
    /// Bottleneck queue; by default one RTT's worth of the rate (at least 10 ms, at least 256 KiB).
    pub queue_bytes: Option<u64>,
    /// Seed of the random decisions: the same seed and traffic give the same fates.
    pub seed: u64,
}

fn default_reorder_depth() -> u32 {
    DEFAULT_REORDER_DEPTH
}

impl Default for Conditions {
    fn default() -> Conditions {
        Conditions {
            rtt_us: 0,
            jitter_us: 0,
            loss: 0.0,
            loss_burst: 0.0,
            reorder: 0.0,
            reorder_model: ReorderModel::default(),
            reorder_depth: DEFAULT_REORDER_DEPTH,
            duplicate: 0.0,
            rate_bps: None,
            queue_bytes: None,
            seed: 0,
        }
    }
}

impl Conditions {
    /// Whether anything beyond a plain rate is asked for.
    pub fn needs_emulation(&self) -> bool {
        self.rtt_us > 0
            || self.jitter_us > 0
            || self.loss > 0.0
            || self.reorder > 0.0
            || self.duplicate > 0.0
    }

    /// The bottleneck queue in bytes: as asked, or one RTT's worth of the rate (at least 10 ms and 256 KiB).
    pub fn queue(&self) -> u64 {
        self.queue_bytes.unwrap_or_else(|| match self.rate_bps {
            Some(rate) => {
                let secs = (self.rtt_us.max(10_000)) as f64 / 1e6;
                ((rate as f64 * secs / 8.0) as u64).max(256 << 10)
            }
            None => 0,
        })
    }

    /// Whether the conditions can be built: probabilities within 0 to 1, a
    /// loss burst of at least one packet, jitter within the one-way delay,
    /// a rate and a reorder depth above zero.
    pub fn validate(&self) -> Result<(), crate::LabError> {
        for (what, p) in [
            ("loss", self.loss),
            ("reorder", self.reorder),
            ("duplicate", self.duplicate),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(SpecError::Probability(what).into());
            }
        }
        if self.loss_burst != 0.0 && self.loss_burst < 1.0 {
            return Err(SpecError::LossBurst.into());
        }
        if self.jitter_us > self.rtt_us / 2 && self.jitter_us > 0 {
            return Err(SpecError::Jitter.into());
        }
        if self.rate_bps == Some(0) {
            return Err(SpecError::ZeroRate.into());
        }
        if self.reorder_depth == 0 {
            return Err(SpecError::ReorderDepth.into());
        }
        Ok(())
    }

    /// Whether `backend` can make these conditions: netem reorders only by
    /// sending a packet past its whole delay line.
    pub fn fits(&self, backend: Backend) -> Result<(), crate::LabError> {
        if backend == Backend::Netem
            && self.reorder > 0.0
            && self.reorder_model != ReorderModel::Netem
        {
            return Err(SpecError::NetemReorder.into());
        }
        Ok(())
    }

    /// One direction of the link, as the emulator applies it.
    pub fn impairments(&self) -> Impairments {
        Impairments {
            delay_us: self.rtt_us / 2,
            jitter_us: self.jitter_us,
            loss: self.loss,
            loss_burst: self.loss_burst,
            reorder: self.reorder,
            reorder_model: self.reorder_model,
            reorder_depth: self.reorder_depth,
            duplicate: self.duplicate,
            rate_bps: self.rate_bps,
            queue_bytes: self.queue(),
            seed: self.seed,
        }
    }

    /// Arguments after `tc qdisc add dev X root` for the netem backend.
    pub fn netem_args(&self) -> Vec<String> {
        let pct = |p: f64| format!("{}%", p * 100.0);
        let mut a = vec!["netem".to_string(), "limit".into(), "1000000".into()];
        a.extend(["delay".into(), format!("{}us", self.rtt_us / 2)]);
        if self.jitter_us > 0 {
            a.push(format!("{}us", self.jitter_us));
        }
        if self.loss > 0.0 {
            if self.loss_burst > 1.0 {
                // Gilbert-Elliott with every packet lost in the bad state, as the emulator does.
                let r = 1.0 / self.loss_burst;
                let p = self.loss * r / (1.0 - self.loss);
                a.extend([
                    "loss".into(),
                    "gemodel".into(),
                    pct(p),
                    pct(r),
                    "100%".into(),
                    "0%".into(),
                ]);
            } else {
                a.extend(["loss".into(), "random".into(), pct(self.loss)]);
            }
        }
        if self.duplicate > 0.0 {
            a.extend(["duplicate".into(), pct(self.duplicate)]);
        }
        if self.reorder > 0.0 {
            a.extend(["reorder".into(), pct(self.reorder)]);
        }
        if let Some(rate) = self.rate_bps {
            a.extend(["rate".into(), format!("{rate}bit")]);
        }
        a.extend(["seed".into(), self.seed.to_string()]);
        a
    }

    /// Arguments after `tc qdisc add dev X root` for a plain rate.
    pub fn tbf_args(&self, mtu: u32) -> Option<Vec<String>> {
        let rate = self.rate_bps?;
        // The bucket holds 1 ms at the rate (at least a 64 KiB super-packet) so GSO bursts pass.
        let burst = ((rate / 8 / 1000).max(64 << 10) + u64::from(mtu)).to_string();
        Some(vec![
            "tbf".into(),
            "rate".into(),
            format!("{rate}bit"),
            "burst".into(),
            burst,
            "limit".into(),
            self.queue().to_string(),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netem_arguments_match_the_conditions() {
        let c = Conditions {
            rtt_us: 44_000,
            jitter_us: 1000,
            loss: 0.001,
            reorder: 0.0002,
            rate_bps: Some(10_000_000_000),
            seed: 5,
            ..Conditions::default()
        };
        assert_eq!(
            c.netem_args().join(" "),
            "netem limit 1000000 delay 22000us 1000us loss random 0.1% reorder 0.02% rate 10000000000bit seed 5"
        );
    }

    #[test]
    fn default_queue_is_one_rtt_of_the_rate() {
        let c = Conditions {
            rtt_us: 44_000,
            rate_bps: Some(10_000_000_000),
            ..Conditions::default()
        };
        assert_eq!(c.queue(), 55_000_000);
        let short = Conditions {
            rate_bps: Some(1_000_000_000),
            ..Conditions::default()
        };
        assert_eq!(short.queue(), 1_250_000, "at least 10 ms");
    }

    #[test]
    fn impairments_split_the_rtt_between_directions() {
        let c = Conditions {
            rtt_us: 44_000,
            ..Conditions::default()
        };
        assert_eq!(c.impairments().delay_us, 22_000);
        assert!(!Conditions::default().needs_emulation());
        assert!(c.needs_emulation());
    }

    #[test]
    fn nonsense_is_refused() {
        assert!(
            Conditions {
                loss: 1.5,
                ..Conditions::default()
            }
            .validate()
            .is_err()
        );
        assert!(
            Conditions {
                loss_burst: 0.5,
                ..Conditions::default()
            }
            .validate()
            .is_err()
        );
        assert!(
            Conditions {
                jitter_us: 5,
                rtt_us: 4,
                ..Conditions::default()
            }
            .validate()
            .is_err()
        );
    }
}
