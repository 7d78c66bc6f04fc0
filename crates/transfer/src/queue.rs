//! The sender's work queue. Each stream keeps to one file while it has
//! blocks left and takes an unclaimed file (largest first) when it runs out,
//! so one file is written by one receiving thread at a time; only when no
//! file is left unclaimed does a stream take blocks from the back of the
//! file with most left. One-block files travel in batches of one directory.
//! The first pass grows while the manifest goes out and ends once sealed.

use linerate_engine::lock;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Condvar, Mutex};

use linerate_wire::{BLOCK_TRAILER_LEN, NeedFile, RECORD_HEADER_LEN};

use super::grid::ranges_bytes;
use super::source::Manifest;

/// Files of one block up to this size travel many to a write.
const SMALL_FILE: u64 = 1 << 20;
/// Bytes of small files gathered into one write.
const SMALL_BATCH: u64 = 1 << 20;
const RECORD_OVERHEAD: u64 = (RECORD_HEADER_LEN + BLOCK_TRAILER_LEN) as u64;

pub enum Work {
    Block { id: u32, index: u64 },
    Small(Vec<u32>),
}

pub enum Next {
    Work(Work),
    /// Nothing left in this pass: say so on the stream.
    EndRound(u32),
    Close,
}

struct FileBlocks {
    id: u32,
    blocks: VecDeque<u64>,
}

/// One pass's work, in the order it should go.
#[derive(Default)]
pub struct Plan {
    files: VecDeque<FileBlocks>,
    small: VecDeque<Vec<u32>>,
    /// Bytes of the files' data the pass sends.
    bytes: u64,
}

/// How far the first pass has come: what the receiver needs of the
/// listing so far and how much of it went out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FirstPass {
    /// Bytes of file data the receiver asked for (grows while the tree is walked).
    pub bytes_needed: u64,
    /// Files the receiver asked for.
    pub files_needed: u64,
    /// Files whose every asked-for block went out.
    pub files_sent: u64,
    /// The receiver has answered the whole listing: the totals hold.
    pub listed: bool,
    /// The file a stream took most recently.
    pub latest: Option<u32>,
}

#[derive(Default)]
struct State {
    unclaimed: VecDeque<FileBlocks>,
    claimed: Vec<FileBlocks>,
    small: VecDeque<Vec<u32>>,
    round: u32,
    closed: bool,
    /// The first pass's blocks not yet sent, by file.
    unsent: HashMap<u32, u64>,
    first: FirstPass,
}

#[derive(Default)]
pub struct Queue {
    state: Mutex<State>,
    wake: Condvar,
}

impl Queue {
    /// The next piece of work for a stream that has ended pass `ended` and
    /// works on file `current`; waits while there is none.
    pub fn next(&self, ended: u32, current: &mut Option<u32>) -> Next {
        let mut st = lock(&self.state);
        loop {
            if st.closed {
                return Next::Close;
            }
            if let Some(id) = *current
                && let Some(f) = st.claimed.iter_mut().find(|f| f.id == id)
                && let Some(index) = f.blocks.pop_front()
            {
                return Next::Work(Work::Block { id, index });
            }
            st.claimed.retain(|f| !f.blocks.is_empty());
            if let Some(mut f) = st.unclaimed.pop_front()
                && let Some(index) = f.blocks.pop_front()
            {
                *current = Some(f.id);
                let id = f.id;
                st.first.latest = Some(id);
                st.claimed.push(f);
                return Next::Work(Work::Block { id, index });
            }
            if let Some(b) = st.small.pop_front() {
                st.first.latest = b.last().copied().or(st.first.latest);
                return Next::Work(Work::Small(b));
            }
            if let Some(f) = st.claimed.iter_mut().max_by_key(|f| f.blocks.len())
                && let Some(index) = f.blocks.pop_back()
            {
                *current = None;
                return Next::Work(Work::Block { id: f.id, index });
            }
            if ended < st.round {
                return Next::EndRound(st.round);
            }
            st = self.wake.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Puts back work a failed stream could not deliver.
    pub fn requeue(&self, w: Work) {
        let mut st = lock(&self.state);
        match w {
            Work::Small(b) => st.small.push_front(b),
            Work::Block { id, index } => {
                if let Some(f) = st.claimed.iter_mut().find(|f| f.id == id) {
                    f.blocks.push_front(index);
                } else {
                    st.unclaimed.push_front(FileBlocks {
                        id,
                        blocks: VecDeque::from([index]),
                    });
                }
            }
        }
        drop(st);
        self.wake.notify_all();
    }

    /// Notes that `w` went out: a first-pass file is sent with its last block.
    pub fn sent(&self, w: &Work) {
        let mut st = lock(&self.state);
        let st = &mut *st;
        let mut one = |id: u32| {
            if let Some(left) = st.unsent.get_mut(&id) {
                *left = left.saturating_sub(1);
                if *left == 0 {
                    st.unsent.remove(&id);
                    st.first.files_sent += 1;
                }
            }
        };
        match w {
            Work::Block { id, .. } => one(*id),
            Work::Small(ids) => ids.iter().copied().for_each(one),
        }
    }

    /// How far the first pass has come.
    pub fn first_pass(&self) -> FirstPass {
        let st = lock(&self.state);
        FirstPass {
            listed: st.round > 0,
            ..st.first
        }
    }

    /// Adds to the first pass while the manifest is still going out.
    pub fn add(&self, plan: Plan) {
        let mut st = lock(&self.state);
        for f in &plan.files {
            st.unsent.insert(f.id, f.blocks.len() as u64);
        }
        for id in plan.small.iter().flatten() {
            st.unsent.insert(*id, 1);
        }
        st.first.files_needed +=
            (plan.files.len() + plan.small.iter().map(Vec::len).sum::<usize>()) as u64;
        st.first.bytes_needed += plan.bytes;
        st.unclaimed.extend(plan.files);
        st.small.extend(plan.small);
        drop(st);
        self.wake.notify_all();
    }

    /// The first pass has all its work: a stream that runs out may end it.
    pub fn seal(&self) {
        let mut st = lock(&self.state);
        st.round += 1;
        drop(st);
        self.wake.notify_all();
    }

    /// Starts the next pass with `plan`.
    pub fn refill(&self, plan: Plan) {
        let mut st = lock(&self.state);
        st.unclaimed = plan.files;
        st.claimed.clear();
        st.small = plan.small;
        st.round += 1;
        drop(st);
        self.wake.notify_all();
    }

    pub fn close(&self) {
        lock(&self.state).closed = true;
        self.wake.notify_all();
    }
}

/// Orders what the receiver misses: the largest files first, then one-block
/// files in batches of one directory each, the directories taken in turn so
/// streams create files in different directories (each directory's lock
/// would otherwise serialize them at the receiver). Files whose source
/// failed are left out.
pub fn plan(m: &Manifest, need: &[NeedFile], block_len: u32, failed: &HashSet<u32>) -> Plan {
    let mut large: Vec<(u64, FileBlocks)> = Vec::new();
    let mut small: Vec<(u64, u32)> = Vec::new();
    let mut bytes = 0u64;
    for f in need.iter().filter(|f| !failed.contains(&f.id)) {
        let Some(e) = m.entry(f.id) else {
            continue;
        };
        let size = e.size();
        bytes += ranges_bytes(&f.ranges, block_len, size);
        if size <= u64::from(block_len) && size <= SMALL_FILE && f.ranges == [[0, 1]] {
            small.push((size, f.id));
            continue;
        }
        let blocks = f.ranges.iter().flat_map(|&[a, b]| a..b).collect();
        large.push((size, FileBlocks { id: f.id, blocks }));
    }
    large.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.id.cmp(&y.1.id)));
    let mut by_dir: BTreeMap<&str, VecDeque<(Vec<u32>, u64)>> = BTreeMap::new();
    for (size, id) in small {
        let path = m.entry(id).map_or("", |e| e.path.as_str());
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let batches = by_dir.entry(dir).or_default();
        if batches
            .back()
            .is_none_or(|(b, bytes)| bytes + size >= SMALL_BATCH || b.len() >= 4096)
        {
            batches.push_back((Vec::new(), 0));
        }
        if let Some((b, bytes)) = batches.back_mut() {
            b.push(id);
            *bytes += size + RECORD_OVERHEAD;
        }
    }
    let mut dirs: Vec<VecDeque<(Vec<u32>, u64)>> = by_dir.into_values().collect();
    let mut out = VecDeque::new();
    while !dirs.is_empty() {
        for d in &mut dirs {
            if let Some((b, _)) = d.pop_front() {
                out.push_back(b);
            }
        }
        dirs.retain(|d| !d.is_empty());
    }
    Plan {
        files: large.into_iter().map(|(_, f)| f).collect(),
        small: out,
        bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_plan(files: &[(u32, u64)]) -> Plan {
        Plan {
            files: files
                .iter()
                .map(|&(id, n)| FileBlocks {
                    id,
                    blocks: (0..n).collect(),
                })
                .collect(),
            ..Plan::default()
        }
    }

    fn take(q: &Queue, cur: &mut Option<u32>) -> Option<(u32, u64)> {
        match q.next(1, cur) {
            Next::Work(Work::Block { id, index }) => Some((id, index)),
            _ => None,
        }
    }

    #[test]
    fn streams_keep_to_their_own_file_then_share_the_last() {
        let q = Queue::default();
        q.refill(file_plan(&[(7, 3), (9, 2)]));
        let (mut a, mut b) = (None, None);
        assert_eq!(take(&q, &mut a), Some((7, 0)));
        assert_eq!(take(&q, &mut b), Some((9, 0)));
        assert_eq!(take(&q, &mut a), Some((7, 1)));
        assert_eq!(take(&q, &mut b), Some((9, 1)));
        // b's file is done and none is unclaimed: it helps with a's, from the back.
        assert_eq!(take(&q, &mut b), Some((7, 2)));
        assert!(matches!(q.next(0, &mut a), Next::EndRound(1)));
    }

    #[test]
    fn requeued_blocks_are_sent_again() {
        let q = Queue::default();
        q.refill(file_plan(&[(1, 1)]));
        let mut a = None;
        assert_eq!(take(&q, &mut a), Some((1, 0)));
        q.requeue(Work::Block { id: 1, index: 0 });
        let mut b = None;
        assert_eq!(take(&q, &mut b), Some((1, 0)));
        q.close();
        assert!(matches!(q.next(0, &mut b), Next::Close));
    }

    #[test]
    fn the_first_pass_takes_work_as_it_is_listed_and_ends_only_once_sealed() {
        let q = Queue::default();
        let mut a = None;
        q.add(file_plan(&[(3, 1)]));
        assert_eq!(take(&q, &mut a), Some((3, 0)));
        // Nothing more yet, but the list is still open: the stream waits
        // rather than ending the pass.
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let mut b = None;
                let first = take(&q, &mut b);
                (first, matches!(q.next(0, &mut b), Next::EndRound(1)))
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(
                !waiter.is_finished(),
                "a stream ended the pass before it was sealed"
            );
            q.add(file_plan(&[(4, 1)]));
            q.seal();
            assert_eq!(waiter.join().unwrap(), (Some((4, 0)), true));
        });
    }
}
