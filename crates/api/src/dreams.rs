//! Dreams of the memory: one now (`/dream`, `cairn memory dream`), the log, a restore, and the
//! daily dream while the memory is idle, run by the app and `cairn serve`.

use std::path::PathBuf;
use std::time::Duration;

use cairn_memory::DreamOptions;
use cairn_protocol::memory::{Dream, DreamState, Restored};

use crate::background::{self, Background};
use cairn_protocol::settings::ModelSlot;

use crate::{Cairn, Error};

/// How long a dream asked for by hand may write notes; the daily one has longer.
const DREAM_BUDGET: Duration = Duration::from_secs(10 * 60);
const DAILY_BUDGET: Duration = Duration::from_secs(30 * 60);
/// The daily dream waits this long after the last dream, and for the memory to be this long
/// without a change.
const DAILY_EVERY: Duration = Duration::from_secs(20 * 60 * 60);
const IDLE_FOR: Duration = Duration::from_secs(30 * 60);
/// How often the daily dream looks whether it is time.
const LOOK_EVERY: Duration = Duration::from_secs(10 * 60);

impl Cairn {
    /// Where the dreams' log and restore points live.
    pub fn dreams_dir(&self) -> PathBuf {
        self.home.data_dir().join("dreams")
    }

    /// Dreams now (see `cairn_memory::dream`), with the summary model writing episode notes.
    /// `trigger` says what asked (`cli`, `app`, `api`).
    pub fn dream(&self, dry_run: bool, trigger: &str) -> Result<Dream, Error> {
        self.dream_for(dry_run, trigger, DREAM_BUDGET)
    }

    fn dream_for(&self, dry_run: bool, trigger: &str, budget: Duration) -> Result<Dream, Error> {
        let writer = self
            .load_config()
            .ok()
            .and_then(|config| self.writer(self.slot_model(&config, ModelSlot::Summary)));
        Ok(self.memory()?.dream(DreamOptions {
            dir: self.dreams_dir(),
            dry_run,
            budget,
            writer,
            trigger: trigger.to_owned(),
        })?)
    }

    /// The dreams' log, newest first.
    pub fn dream_log(&self, limit: usize) -> Result<Vec<Dream>, Error> {
        Ok(self.memory()?.dreams(&self.dreams_dir(), limit)?)
    }

    /// Puts the memory back as it was before dream `id`.
    pub fn restore_dream(&self, id: i64) -> Result<Restored, Error> {
        Ok(self.memory()?.restore_dream(&self.dreams_dir(), id)?)
    }

    /// Dreams once a day while the memory is idle (`[memory] dream`, on by default), until the
    /// handle is dropped: every [`LOOK_EVERY`] (the first time too: not while the app starts) it
    /// dreams when the last dream is [`DAILY_EVERY`] old, the memory changed since, and nothing
    /// changed for [`IDLE_FOR`]. A dream cut short by quitting changed nothing.
    pub fn spawn_daily_dream(&self) -> Background {
        let cairn = self.clone();
        background::every(LOOK_EVERY, move || {
            if !cairn.load_config().is_ok_and(|c| c.memory_dream) {
                return;
            }
            match cairn.daily_dream_due() {
                Ok(true) => match cairn.dream_for(false, "schedule", DAILY_BUDGET) {
                    Ok(dream) => tracing::info!(
                        "the memory dreamt (dream {}): {} changes, {}",
                        dream.id,
                        dream.changes.len(),
                        dream.state.as_str()
                    ),
                    Err(e) => tracing::warn!("the daily dream did not run: {e}"),
                },
                Ok(false) => {}
                Err(e) => tracing::warn!("cannot tell whether the memory should dream: {e}"),
            }
        })
    }

    /// Whether the daily dream is due now.
    fn daily_dream_due(&self) -> Result<bool, Error> {
        let now = cairn_memory::now_ms();
        let last = self
            .dream_log(20)?
            .into_iter()
            .find(|d| d.state != DreamState::DryRun);
        if last
            .as_ref()
            .is_some_and(|d| now - d.started_at < DAILY_EVERY.as_millis() as i64)
        {
            return Ok(false);
        }
        let Some(changed) = self.memory()?.last_change_at()? else {
            return Ok(false);
        };
        // Nothing new since the last dream: nothing to dream about.
        if last
            .and_then(|d| d.finished_at)
            .is_some_and(|finished| changed <= finished)
        {
            return Ok(false);
        }
        Ok(now - changed >= IDLE_FOR.as_millis() as i64)
    }
}
