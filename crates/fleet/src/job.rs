//! What each rank of a proxy application exchanges every iteration: a 3D
//! halo exchange (faces, edges and corners with the 26 neighbours of a
//! periodic grid, as Ember's halo3d-26) or an all-to-all (a message to
//! every other rank, as the FFT proxy subcom3d-a2a).

/// Bytes of one grid value (a double).
const VALUE_BYTES: u64 = 8;

/// The most balanced x by y by z grid of `ranks` (as `MPI_Dims_create`):
/// the factors as equal as they can be, largest first.
pub fn grid_dims(ranks: u32) -> [u32; 3] {
    let n = ranks.max(1);
    let mut best = [n, 1, 1];
    let spread = |d: &[u32; 3]| d[0] - d[2];
    for x in 1..=n {
        if !n.is_multiple_of(x) {
            continue;
        }
        for y in 1..=n / x {
            if !(n / x).is_multiple_of(y) {
                continue;
            }
            let mut d = [x, y, n / x / y];
            d.sort_unstable_by(|a, b| b.cmp(a));
            if spread(&d) < spread(&best) {
                best = d;
            }
        }
    }
    best
}

/// A halo exchange's shape: each rank holds `cells` (x, y, z) of `values`
/// doubles each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Halo {
    /// Cells per rank along x, y and z.
    pub cells: [u32; 3],
    /// Doubles per cell.
    pub values: u32,
}

impl Halo {
    /// Bytes sent across a face, an edge or a corner with `zeros` axes of
    /// the offset zero (a face has two, an edge one, a corner none).
    fn message_bytes(&self, offset: [i64; 3]) -> u64 {
        let along: u64 = (0..3)
            .filter(|&a| offset[a] == 0)
            .map(|a| u64::from(self.cells[a]))
            .product();
        along * u64::from(self.values) * VALUE_BYTES
    }
}

/// Rank `rank`'s peers in a periodic grid of `dims` and the bytes it sends
/// each per iteration: its 26 neighbours, where a neighbour is itself (an
/// axis of one rank) dropped and several offsets landing on one rank
/// joined into one message.
pub fn halo3d_peers(rank: u32, dims: [u32; 3], halo: Halo) -> Vec<(u32, u64)> {
    let [dx, dy, dz] = dims.map(|d| i64::from(d.max(1)));
    let r = i64::from(rank);
    let at = [r % dx, r / dx % dy, r / dx / dy];
    let mut peers: Vec<(u32, u64)> = Vec::new();
    for ox in -1..=1i64 {
        for oy in -1..=1i64 {
            for oz in -1..=1i64 {
                if (ox, oy, oz) == (0, 0, 0) {
                    continue;
                }
                let x = (at[0] + ox).rem_euclid(dx);
                let y = (at[1] + oy).rem_euclid(dy);
                let z = (at[2] + oz).rem_euclid(dz);
                let peer = (x + dx * (y + dy * z)) as u32;
                if peer == rank {
                    continue;
                }
                let bytes = halo.message_bytes([ox, oy, oz]);
                match peers.iter_mut().find(|(p, _)| *p == peer) {
                    Some((_, b)) => *b += bytes,
                    None => peers.push((peer, bytes)),
                }
            }
        }
    }
    peers.sort_unstable();
    peers
}

/// Rank `rank`'s peers in an all-to-all of `ranks`: every other rank,
/// `bytes` each.
pub fn all_to_all_peers(rank: u32, ranks: u32, bytes: u64) -> Vec<(u32, u64)> {
    (0..ranks)
        .filter(|&p| p != rank)
        .map(|p| (p, bytes))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_as_balanced_as_the_rank_count_allows() {
        assert_eq!(grid_dims(8), [2, 2, 2]);
        assert_eq!(grid_dims(4), [2, 2, 1]);
        assert_eq!(grid_dims(48), [4, 4, 3]);
        assert_eq!(grid_dims(7), [7, 1, 1]);
        assert_eq!(grid_dims(1), [1, 1, 1]);
    }

    #[test]
    fn a_large_grid_gives_26_neighbours_with_faces_edges_and_corners() {
        let halo = Halo {
            cells: [10, 10, 10],
            values: 1,
        };
        let peers = halo3d_peers(13, [3, 3, 3], halo);
        assert_eq!(peers.len(), 26);
        let total: u64 = peers.iter().map(|p| p.1).sum();
        // 6 faces of 100 cells, 12 edges of 10, 8 corners of 1, 8 bytes each.
        assert_eq!(total, (6 * 100 + 12 * 10 + 8) * 8);
    }

    #[test]
    fn small_grids_join_offsets_that_land_on_one_rank_and_skip_itself() {
        let halo = Halo {
            cells: [4, 4, 4],
            values: 2,
        };
        let peers = halo3d_peers(0, grid_dims(4), halo);
        assert_eq!(peers.iter().map(|p| p.0).collect::<Vec<_>>(), [1, 2, 3]);
        // Every byte of the 26 messages that does not wrap to itself is
        // sent; on a 2x2x1 grid the two z faces wrap to the rank itself.
        let all: u64 = (6 * 16 + 12 * 4 + 8) * 2 * 8;
        let to_self: u64 = 2 * 16 * 2 * 8;
        assert_eq!(peers.iter().map(|p| p.1).sum::<u64>(), all - to_self);
        for r in 0..4 {
            for (p, bytes) in halo3d_peers(r, grid_dims(4), halo) {
                let back = halo3d_peers(p, grid_dims(4), halo);
                assert!(back.contains(&(r, bytes)), "{r} and {p} exchange the same");
            }
        }
    }

    #[test]
    fn all_to_all_is_every_other_rank() {
        assert_eq!(all_to_all_peers(1, 4, 64), [(0, 64), (2, 64), (3, 64)]);
    }
}
