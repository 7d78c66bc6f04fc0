//! Which launcher started this process, its rank among the run's ranks,
//! and the hosts they run on, from the environment the launcher sets:
//!
//! | launcher | rank | size | hosts |
//! |---|---|---|---|
//! | Slurm (`srun`) | `SLURM_PROCID` | `SLURM_NTASKS` | `SLURM_JOB_NODELIST` (a host list) |
//! | Open MPI (`mpirun`) | `OMPI_COMM_WORLD_RANK` | `OMPI_COMM_WORLD_SIZE` | not told: rank 0 is found at the rendezvous |
//! | MPICH, Intel MPI (PMI) | `PMI_RANK` | `PMI_SIZE` | not told |
//!
//! Slurm is looked at first: `srun` inside an MPI job sets both. Without
//! any, a run is a single process, or an ssh fan-out from a host list the
//! user gave (`--hosts`).

use crate::FleetError;

/// What started this process and told it its rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launcher {
    /// `srun`: SLURM_PROCID, SLURM_NTASKS, SLURM_JOB_NODELIST.
    Slurm,
    /// Open MPI's `mpirun`: OMPI_COMM_WORLD_RANK and _SIZE.
    OpenMpi,
    /// A PMI launcher (MPICH, Intel MPI): PMI_RANK and PMI_SIZE.
    Pmi,
    /// Started by linerate itself over ssh, from `--hosts`.
    Ssh,
    /// No launcher: one process.
    Single,
}

impl Launcher {
    /// The launcher as results name it.
    pub fn name(self) -> &'static str {
        match self {
            Launcher::Slurm => "slurm",
            Launcher::OpenMpi => "openmpi",
            Launcher::Pmi => "pmi",
            Launcher::Ssh => "ssh",
            Launcher::Single => "single",
        }
    }
}

/// Where this process stands in its run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// Who started the process.
    pub launcher: Launcher,
    /// This process's rank, from 0.
    pub rank: u32,
    /// Ranks in the run.
    pub size: u32,
    /// The run's hosts where the launcher names them (Slurm, ssh).
    pub hosts: Vec<String>,
}

impl Launch {
    /// Rank 0 coordinates; every other rank is an agent.
    pub fn is_coordinator(&self) -> bool {
        self.rank == 0
    }
}

/// Most ranks a run may have.
pub const MAX_RANKS: u32 = 1 << 16;

fn number(
    env: &dyn Fn(&str) -> Option<String>,
    variable: &'static str,
) -> Result<Option<u32>, FleetError> {
    let Some(value) = env(variable) else {
        return Ok(None);
    };
    value
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|&n| n < MAX_RANKS)
        .map(Some)
        .ok_or(FleetError::NotACount { variable, value })
}

/// The rank and size a pair of variables give, checked.
fn ranked(
    env: &dyn Fn(&str) -> Option<String>,
    rank: &'static str,
    size: &'static str,
) -> Result<Option<(u32, u32)>, FleetError> {
    let (Some(r), Some(s)) = (number(env, rank)?, number(env, size)?) else {
        return Ok(None);
    };
    if s == 0 || r >= s {
        return Err(FleetError::NotARank {
            variable: rank,
            rank: r,
            size_variable: size,
            size: s,
        });
    }
    Ok(Some((r, s)))
}

/// The launch the environment describes; `ssh_hosts` is the user's
/// `--hosts`, used when no launcher set anything (this process is then
/// the coordinator, rank 0, of one rank per host).
pub fn detect(
    env: &dyn Fn(&str) -> Option<String>,
    ssh_hosts: Option<&[String]>,
) -> Result<Launch, FleetError> {
    if let Some((rank, size)) = ranked(env, "SLURM_PROCID", "SLURM_NTASKS")? {
        let hosts = match env("SLURM_JOB_NODELIST").or_else(|| env("SLURM_NODELIST")) {
            Some(list) => crate::hostlist::expand(&list)?,
            None => Vec::new(),
        };
        return Ok(Launch {
            launcher: Launcher::Slurm,
            rank,
            size,
            hosts,
        });
    }
    for (launcher, rank, size) in [
        (
            Launcher::OpenMpi,
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE",
        ),
        (Launcher::Pmi, "PMI_RANK", "PMI_SIZE"),
    ] {
        if let Some((rank, size)) = ranked(env, rank, size)? {
            return Ok(Launch {
                launcher,
                rank,
                size,
                hosts: Vec::new(),
            });
        }
    }
    Ok(match ssh_hosts {
        Some(hosts) if !hosts.is_empty() => Launch {
            launcher: Launcher::Ssh,
            rank: 0,
            size: hosts.len() as u32,
            hosts: hosts.to_vec(),
        },
        _ => Launch {
            launcher: Launcher::Single,
            rank: 0,
            size: 1,
            hosts: Vec::new(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn slurm_gives_rank_size_and_its_node_list() {
        let e = env(&[
            ("SLURM_PROCID", "3"),
            ("SLURM_NTASKS", "4"),
            ("SLURM_JOB_NODELIST", "node[01-04]"),
            // srun under mpirun sets both: Slurm's word counts.
            ("OMPI_COMM_WORLD_RANK", "0"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
        ]);
        let l = detect(&e, None).unwrap();
        assert_eq!((l.launcher, l.rank, l.size), (Launcher::Slurm, 3, 4));
        assert_eq!(l.hosts, ["node01", "node02", "node03", "node04"]);
        assert!(!l.is_coordinator());
    }

    #[test]
    fn mpi_ranks_without_hosts() {
        let ompi = env(&[("OMPI_COMM_WORLD_RANK", "0"), ("OMPI_COMM_WORLD_SIZE", "8")]);
        let l = detect(&ompi, None).unwrap();
        assert_eq!((l.launcher, l.rank, l.size), (Launcher::OpenMpi, 0, 8));
        assert!(l.is_coordinator() && l.hosts.is_empty());
        let mpich = env(&[("PMI_RANK", "5"), ("PMI_SIZE", "6")]);
        assert_eq!(detect(&mpich, None).unwrap().launcher, Launcher::Pmi);
    }

    #[test]
    fn ssh_hosts_or_a_single_process_without_a_launcher() {
        let none = env(&[]);
        let hosts = vec!["h1".to_string(), "h2".to_string()];
        let l = detect(&none, Some(&hosts)).unwrap();
        assert_eq!((l.launcher, l.rank, l.size), (Launcher::Ssh, 0, 2));
        assert_eq!(detect(&none, None).unwrap().launcher, Launcher::Single);
    }

    #[test]
    fn inconsistent_environments_are_refused_naming_the_variable() {
        for pairs in [
            &[("SLURM_PROCID", "4"), ("SLURM_NTASKS", "4")][..],
            &[("SLURM_PROCID", "x"), ("SLURM_NTASKS", "4")],
            &[("PMI_RANK", "0"), ("PMI_SIZE", "0")],
            &[
                ("SLURM_PROCID", "0"),
                ("SLURM_NTASKS", "2"),
                ("SLURM_JOB_NODELIST", "n[2-1]"),
            ],
        ] {
            let e = detect(&env(pairs), None).unwrap_err().to_string();
            assert!(
                e.contains("SLURM") || e.contains("PMI") || e.contains("n[2-1]"),
                "{pairs:?}: {e}"
            );
        }
    }
}
