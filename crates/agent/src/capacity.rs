//! Capacity (agent-loop.json `capacity`): how many requests a model's server answers at once, and
//! the slots that leaves beside the conversation's own — shared by the subagents and team members
//! of every conversation on that model in this process. A subagent is not started without a free
//! slot; a team member waits for one.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A model's parallelism and its free slots.
#[derive(Clone, Debug)]
pub struct Capacity {
    /// Requests its server answers at once (1: one at a time).
    pub parallel: usize,
    free: Arc<Semaphore>,
}

/// A slot held: given back when dropped.
pub type Slot = OwnedSemaphorePermit;

impl Capacity {
    /// A model answering `parallel` requests at once: one is the conversation's own.
    pub fn new(parallel: usize) -> Self {
        let parallel = parallel.max(1);
        Self {
            parallel,
            free: Arc::new(Semaphore::new(parallel - 1)),
        }
    }

    /// A free slot now, if there is one.
    pub fn try_take(&self) -> Option<Slot> {
        self.free.clone().try_acquire_owned().ok()
    }

    /// A slot, once one is free.
    pub async fn take(&self) -> Option<Slot> {
        self.free.clone().acquire_owned().await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_what_the_conversation_leaves() {
        let one = Capacity::new(1);
        assert!(one.try_take().is_none());
        let three = Capacity::new(3);
        let a = three.try_take();
        let b = three.try_take();
        assert!(a.is_some() && b.is_some());
        assert!(three.try_take().is_none());
        drop(a);
        assert!(three.try_take().is_some());
    }
}
