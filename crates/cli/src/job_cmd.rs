//! `linerate job`: proxy applications across many hosts, launched as
//! incast and mesh are (lab, ssh, srun, mpirun): a bandwidth-heavy 3D halo
//! exchange and a latency-sensitive all-to-all, each rank timing every
//! iteration.

use clap::{Args, Subcommand};
use linerate_fleet::coordinator::{
    JobKind, JobPlan, MAX_JOB_ITERATIONS, MAX_JOB_MESSAGE, PlannedStep,
};
use linerate_fleet::job::{self, Halo};

use crate::fleet_cmd::{LaunchArgs, RunArgs, RunSocketFlags, run_fleet};
use crate::units;

#[derive(Subcommand)]
pub enum JobCommand {
    /// Each rank exchanges faces, edges and corners with its 26 neighbours in a
    /// periodic 3D grid every iteration (bandwidth-heavy, as Ember's halo3d-26).
    Halo3d(Halo3dArgs),
    /// Each rank sends a small message to every other rank every iteration
    /// (latency-sensitive, as the FFT proxy subcom3d-a2a).
    #[command(name = "all-to-all", alias = "a2a")]
    AllToAll(AllToAllArgs),
}

/// What every proxy job takes: where its ranks come from, how long it may
/// run, its iterations and its marking.
#[derive(Args, Clone, Debug)]
pub struct JobArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Iterations every rank runs.
    #[arg(short = 'n', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_JOB_ITERATIONS)))]
    pub iterations: Option<u32>,
    /// Compute time per iteration before its exchange (slept, not spun:
    /// the ranks share the lab's cores with its network).
    #[arg(long, value_name = "TIME", value_parser = units::parse_time_us)]
    pub compute: Option<u64>,
    /// The job's time limit: ranks stop there and report what they completed.
    #[arg(long, value_name = "TIME", default_value = "10m", value_parser = units::parse_duration_ms)]
    pub limit: u64,
    /// Give up the whole run after this long (default: the limit, with room
    /// for joining and reporting).
    #[arg(long, value_name = "TIME", value_parser = units::parse_duration_ms)]
    pub timeout: Option<u64>,
    #[command(flatten)]
    pub socket: RunSocketFlags,
    #[command(flatten)]
    pub history: crate::archive_cmd::ArchiveFlags,
    /// Write the linerate.result/1 document to FILE ('-' for stdout; human output then
    /// goes to stderr).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
}

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    linerate job halo3d --lab fab --lab-hosts h1,h3,h6,h8 --dscp af11\n  \
    srun -N 48 linerate job halo3d --cells 100 --iterations 1000 --json halo.json")]
pub struct Halo3dArgs {
    #[command(flatten)]
    pub job: JobArgs,
    /// Cells each rank holds along x, y and z (one number for a cube).
    #[arg(long, value_name = "N[,N,N]", default_value = "64", value_parser = parse_cells)]
    pub cells: Cells,
    /// Doubles per cell: a face carries cells x cells x values x 8 bytes.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub values: u32,
}

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    linerate job all-to-all --lab fab --lab-hosts h2,h4,h5,h7 --dscp ef\n  \
    mpirun -np 48 linerate job a2a --message 4K --coordinator node01")]
pub struct AllToAllArgs {
    #[command(flatten)]
    pub job: JobArgs,
    /// Bytes each rank sends every other rank per iteration.
    #[arg(long, value_name = "SIZE", default_value = "4K", value_parser = units::parse_size)]
    pub message: u64,
}

#[derive(Clone, Copy, Debug)]
pub struct Cells([u32; 3]);

fn parse_cells(s: &str) -> Result<Cells, String> {
    let v: Vec<u32> = s
        .split(',')
        .map(|t| t.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("'{s}': give N or N,N,N cells (1 to 1024)"))?;
    let cells = match v.as_slice() {
        [n] => [*n; 3],
        [x, y, z] => [*x, *y, *z],
        _ => return Err(format!("'{s}': give N or N,N,N cells")),
    };
    if cells.iter().any(|c| !(1..=1024).contains(c)) {
        return Err(format!("'{s}': each side 1 to 1024 cells"));
    }
    Ok(Cells(cells))
}

pub fn run(cmd: JobCommand) -> anyhow::Result<()> {
    match cmd {
        JobCommand::Halo3d(a) => {
            let halo = Halo {
                cells: a.cells.0,
                values: a.values,
            };
            let face = u64::from(a.cells.0[0]) * u64::from(a.cells.0[1]) * u64::from(a.values) * 8;
            if face > u64::from(MAX_JOB_MESSAGE) {
                return Err(crate::usage::UsageError(format!(
                    "--cells and --values make faces of {face} bytes; at most 64 MiB"
                ))
                .into());
            }
            let common = a.job.clone();
            let plan_for = move |size: u32| {
                let dims = job::grid_dims(size);
                let peers = (0..size)
                    .map(|r| job::halo3d_peers(r, dims, halo))
                    .collect();
                Ok(vec![step(
                    &common,
                    JobKind::Halo3d,
                    1000,
                    100,
                    Some(dims),
                    peers,
                )])
            };
            run_fleet("job", &run_args(&a.job), &plan_for)
        }
        JobCommand::AllToAll(a) => {
            let common = a.job.clone();
            let message = a.message.clamp(1, 64 << 20);
            let plan_for = move |size: u32| {
                let peers = (0..size)
                    .map(|r| job::all_to_all_peers(r, size, message))
                    .collect();
                Ok(vec![step(&common, JobKind::AllToAll, 0, 1000, None, peers)])
            };
            run_fleet("job", &run_args(&a.job), &plan_for)
        }
    }
}

/// The job as one step of a many-host run.
fn step(
    a: &JobArgs,
    kind: JobKind,
    default_compute_us: u64,
    default_iterations: u32,
    grid: Option<[u32; 3]>,
    peers: Vec<Vec<(u32, u64)>>,
) -> PlannedStep {
    linerate_fleet::run::job_step(JobPlan {
        kind,
        iterations: a.iterations.unwrap_or(default_iterations),
        compute_us: a.compute.unwrap_or(default_compute_us).min(10_000_000) as u32,
        grid,
        peers,
    })
}

/// The job's settings as a many-host run's: one step as long as its limit.
fn run_args(a: &JobArgs) -> RunArgs {
    RunArgs {
        launch: a.launch.clone(),
        time_ms: a.limit,
        interval_ms: 0,
        timeout: a.timeout,
        json: a.json.clone(),
        socket: a.socket.clone(),
        history: a.history.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_a_cube_or_three_sides() {
        assert_eq!(parse_cells("64").unwrap().0, [64, 64, 64]);
        assert_eq!(parse_cells("10,20,30").unwrap().0, [10, 20, 30]);
        assert!(parse_cells("0").is_err());
        assert!(parse_cells("1,2").is_err());
    }
}
