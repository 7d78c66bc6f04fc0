//! A fabric's nodes and links: hosts and switches joined by ports (each
//! direction of a link is one port, with its rate and delay), and the
//! equal-cost next hops from every node to every host.

use std::collections::VecDeque;

use super::{FabricSpec, Topology};

/// A host or a switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// h1.., sw1, left/right, leaf1.., spine1..
    pub name: String,
    /// Whether it is a host (hosts come first: host `i` is node `i`).
    pub host: bool,
}

/// One direction of a link: what `from` sends to `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// The sending node.
    pub from: usize,
    /// The receiving node.
    pub to: usize,
    /// Bits per second.
    pub rate_bps: u64,
    /// Propagation delay, nanoseconds.
    pub delay_ns: u64,
}

/// The fabric as nodes and ports, with its routes.
#[derive(Clone, Debug)]
pub struct Graph {
    /// Hosts first, then switches.
    pub nodes: Vec<Node>,
    /// Every port (one direction of one link).
    pub ports: Vec<Link>,
    /// `reverse[p]`: the port of the same link in the other direction.
    pub reverse: Vec<usize>,
    /// `next[node][host]`: the ports on a shortest path from `node` to `host`.
    next: Vec<Vec<Vec<usize>>>,
    hosts: usize,
}

impl Graph {
    /// Lays out the fabric `spec` asks for.
    pub fn build(spec: &FabricSpec) -> Graph {
        let rate = spec.host_rate_bps;
        let delay_ns = spec.hop_delay_us * 1000;
        let mut g = Graph {
            nodes: Vec::new(),
            ports: Vec::new(),
            reverse: Vec::new(),
            next: Vec::new(),
            hosts: usize::from(spec.topology.hosts()),
        };
        for i in 1..=g.hosts {
            g.nodes.push(Node {
                name: format!("h{i}"),
                host: true,
            });
        }
        let switch = |g: &mut Graph, name: String| {
            g.nodes.push(Node { name, host: false });
            g.nodes.len() - 1
        };
        match spec.topology {
            Topology::Star { hosts } => {
                let sw = switch(&mut g, "sw1".into());
                for h in 0..usize::from(hosts) {
                    g.link(h, sw, rate, delay_ns);
                }
            }
            Topology::Dumbbell { hosts } => {
                let (left, right) = (
                    switch(&mut g, "left".into()),
                    switch(&mut g, "right".into()),
                );
                let half = usize::from(hosts).div_ceil(2);
                for h in 0..usize::from(hosts) {
                    g.link(h, if h < half { left } else { right }, rate, delay_ns);
                }
                g.link(left, right, spec.taper.uplink(rate * half as u64), delay_ns);
            }
            Topology::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
            } => {
                let leaf_ids: Vec<usize> = (1..=leaves)
                    .map(|i| switch(&mut g, format!("leaf{i}")))
                    .collect();
                let spine_ids: Vec<usize> = (1..=spines)
                    .map(|i| switch(&mut g, format!("spine{i}")))
                    .collect();
                let per_leaf = usize::from(hosts_per_leaf);
                for h in 0..g.hosts {
                    g.link(h, leaf_ids[h / per_leaf], rate, delay_ns);
                }
                let uplink = spec.taper.uplink(rate * per_leaf as u64) / u64::from(spines);
                for &leaf in &leaf_ids {
                    for &spine in &spine_ids {
                        g.link(leaf, spine, uplink.max(1), delay_ns);
                    }
                }
            }
        }
        g.next = (0..g.nodes.len())
            .map(|n| (0..g.hosts).map(|h| g.shortest_next(n, h)).collect())
            .collect();
        g
    }

    fn link(&mut self, a: usize, b: usize, rate_bps: u64, delay_ns: u64) {
        let p = self.ports.len();
        self.ports.push(Link {
            from: a,
            to: b,
            rate_bps,
            delay_ns,
        });
        self.ports.push(Link {
            from: b,
            to: a,
            rate_bps,
            delay_ns,
        });
        self.reverse.extend([p + 1, p]);
    }

    /// Ports out of `from` that start a shortest path to host `to`.
    fn shortest_next(&self, from: usize, to: usize) -> Vec<usize> {
        // Hops to `to` from every node, by breadth-first search from it.
        let mut hops = vec![usize::MAX; self.nodes.len()];
        hops[to] = 0;
        let mut queue = VecDeque::from([to]);
        while let Some(n) = queue.pop_front() {
            for l in self.ports.iter().filter(|l| l.to == n) {
                // Paths run through switches only, never through a host.
                if hops[l.from] == usize::MAX && (n == to || !self.nodes[n].host) {
                    hops[l.from] = hops[n] + 1;
                    queue.push_back(l.from);
                }
            }
        }
        if from == to || hops[from] == usize::MAX {
            return Vec::new();
        }
        (0..self.ports.len())
            .filter(|&p| {
                let l = &self.ports[p];
                l.from == from
                    && hops[l.to] != usize::MAX
                    && hops[l.to] + 1 == hops[from]
                    && (l.to == to || !self.nodes[l.to].host)
            })
            .collect()
    }

    /// The port `node` sends a packet for host `to` out of; among equal
    /// paths the flow's hash picks one, so a flow keeps its path (ECMP).
    pub fn route(&self, node: usize, to: usize, flow_hash: u32) -> Option<usize> {
        let choices = self.next.get(node)?.get(to)?;
        if choices.is_empty() {
            return None;
        }
        Some(choices[flow_hash as usize % choices.len()])
    }

    /// Every port out of `node` that starts a shortest path to host `to`.
    pub fn next_hops(&self, node: usize, to: usize) -> &[usize] {
        self.next
            .get(node)
            .and_then(|n| n.get(to))
            .map_or(&[], Vec::as_slice)
    }

    /// How many hosts the fabric has.
    pub fn hosts(&self) -> usize {
        self.hosts
    }

    /// A port's name: the sending node's name and the receiving node's,
    /// as `leaf1>h3`.
    pub fn port_name(&self, p: usize) -> String {
        let l = &self.ports[p];
        format!("{}>{}", self.nodes[l.from].name, self.nodes[l.to].name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{FabricSpec, Taper};

    fn leaf_spine(spines: u8) -> Graph {
        Graph::build(&FabricSpec {
            topology: Topology::LeafSpine {
                leaves: 2,
                spines,
                hosts_per_leaf: 4,
            },
            taper: Taper { down: 4, up: 1 },
            ..FabricSpec::default()
        })
    }

    fn path(g: &Graph, from: usize, to: usize, hash: u32) -> Vec<String> {
        let mut names = Vec::new();
        let mut at = from;
        while at != to {
            let p = g.route(at, to, hash).expect("a route");
            names.push(g.port_name(p));
            at = g.ports[p].to;
            assert!(names.len() < 10, "loop: {names:?}");
        }
        names
    }

    #[test]
    fn leaf_spine_routes_within_a_leaf_and_across_a_spine() {
        let g = leaf_spine(1);
        assert_eq!(g.nodes.len(), 8 + 3);
        assert_eq!(path(&g, 0, 1, 0), ["h1>leaf1", "leaf1>h2"]);
        assert_eq!(
            path(&g, 0, 5, 0),
            ["h1>leaf1", "leaf1>spine1", "spine1>leaf2", "leaf2>h6"]
        );
    }

    #[test]
    fn a_4_to_1_taper_gives_the_uplinks_a_quarter_of_the_hosts_rate() {
        let g = leaf_spine(2);
        let up: Vec<u64> = g
            .ports
            .iter()
            .filter(|l| {
                g.nodes[l.from].name.starts_with("leaf") && g.nodes[l.to].name.starts_with("spine")
            })
            .map(|l| l.rate_bps)
            .collect();
        let host = g.ports[0].rate_bps;
        assert_eq!(up.len(), 4);
        assert!(
            up.iter().all(|&r| r * 2 * 4 == host * 4),
            "{up:?} vs host {host}"
        );
    }

    #[test]
    fn flows_spread_over_the_spines_by_their_hash_and_keep_their_path() {
        let g = leaf_spine(2);
        let a = path(&g, 0, 5, 0);
        let b = path(&g, 0, 5, 1);
        assert_ne!(a[1], b[1], "two hashes, two spines");
        assert_eq!(a, path(&g, 0, 5, 2));
    }

    #[test]
    fn a_dumbbell_crosses_its_middle_link_and_reverse_ports_pair_up() {
        let g = Graph::build(&FabricSpec {
            topology: Topology::Dumbbell { hosts: 4 },
            ..FabricSpec::default()
        });
        assert_eq!(path(&g, 0, 3, 7), ["h1>left", "left>right", "right>h4"]);
        for p in 0..g.ports.len() {
            let (l, r) = (&g.ports[p], &g.ports[g.reverse[p]]);
            assert_eq!((l.from, l.to), (r.to, r.from));
        }
        assert_eq!(g.route(0, 0, 0), None, "no route to itself");
    }
}
