//! Work on every core, results in the list's order as soon as they can be: each of rayon's
//! threads takes the next item of the list when it is free (so a slow file holds up no
//! thread), and the calling thread hands the results over in the list's order, each as soon
//! as every earlier one has been (a reorder buffer).
//!
//! Items are taken in the list's order, so what waits in the reorder buffer is what finished
//! while an earlier, slower item was still being worked on: a few results at a time, not the
//! whole list. A bounded channel stops the workers while the consumer is behind (a slow
//! reader of the report).

use rayon::iter::{ParallelBridge, ParallelIterator};
use std::collections::BTreeMap;
use std::sync::mpsc;

/// What the consumer is handed.
pub enum Handed<T> {
    /// The next result of the list.
    Next(T),
    /// The next result is not ready yet (a moment to flush what was written).
    Waiting,
}

/// `work` of each index below `count` on rayon's threads; `consume` of each result on this
/// thread in the indexes' order, and of [`Handed::Waiting`] when the next is not ready yet.
pub fn in_list_order<T: Send>(
    count: usize,
    work: impl Fn(usize) -> T + Sync,
    mut consume: impl FnMut(Handed<T>),
) {
    let capacity = 2 * rayon::current_num_threads().max(1);
    let (sender, receiver) = mpsc::sync_channel::<(usize, T)>(capacity);
    std::thread::scope(|scope| {
        let work = &work;
        scope.spawn(move || {
            // `par_bridge` hands the indexes out one at a time, in order, to whichever thread
            // is free. A send fails only when the consumer is gone: the rest is not worked on.
            let _ = (0..count)
                .par_bridge()
                .try_for_each(|i| sender.send((i, work(i))).map_err(|_| ()));
        });
        let mut waiting: BTreeMap<usize, T> = BTreeMap::new();
        let mut next = 0;
        loop {
            let (index, result) = match receiver.try_recv() {
                Ok(r) => r,
                Err(mpsc::TryRecvError::Empty) => {
                    consume(Handed::Waiting);
                    match receiver.recv() {
                        Ok(r) => r,
                        Err(mpsc::RecvError) => break,
                    }
                }
                Err(mpsc::TryRecvError::Disconnected) => break,
            };
            waiting.insert(index, result);
            while let Some(result) = waiting.remove(&next) {
                consume(Handed::Next(result));
                next += 1;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn hands_over_in_the_lists_order_when_later_items_finish_first() {
        let mut seen = Vec::new();
        super::in_list_order(
            64,
            |i| {
                // Early items take longest, so that later ones finish first.
                std::thread::sleep(std::time::Duration::from_millis(((64 - i) % 7) as u64));
                i
            },
            |handed| {
                if let super::Handed::Next(i) = handed {
                    seen.push(i)
                }
            },
        );
        assert_eq!(seen, (0..64).collect::<Vec<_>>());
    }
}
