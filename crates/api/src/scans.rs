//! Scans of other agents' history started by a person (the Sources page, `POST
//! /api/v1/sources/scan`): one at a time whichever door starts it, paused, resumed or stopped by
//! [`ScanAction`]. The chat holds the one [`Scans`] and publishes their progress
//! (`Chat::scan_sources`).

use std::sync::{Arc, Mutex};

use cairn_importers::{Progress, ScanControl, ScanMode, SourceReport};
use cairn_protocol::ScanAction;

use crate::{Cairn, Error};

/// The scan in progress, if any.
#[derive(Default)]
pub struct Scans {
    control: Mutex<Option<Arc<ScanControl>>>,
}

/// Frees the slot when the scan ends, however it ends.
struct Running<'a>(&'a Scans);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if let Ok(mut slot) = self.0.control.lock() {
            *slot = None;
        }
    }
}

impl Scans {
    fn slot(&self) -> Result<std::sync::MutexGuard<'_, Option<Arc<ScanControl>>>, Error> {
        self.control
            .lock()
            .map_err(|_| Error::Internal("the scan lock was poisoned".into()))
    }

    /// Whether a scan runs now.
    pub fn running(&self) -> bool {
        self.slot().is_ok_and(|slot| slot.is_some())
    }

    /// Scans every detected, enabled source (or only `only`; `full` rereads every file), telling
    /// `on_progress` how it goes; one report per source scanned. Refused while another scan
    /// runs. Blocking: call it off the async runtime's threads.
    pub fn run(
        &self,
        cairn: &Cairn,
        only: Option<&str>,
        full: bool,
        on_progress: &mut dyn FnMut(Progress),
    ) -> Result<Vec<SourceReport>, Error> {
        let control = Arc::new(ScanControl::default());
        {
            let mut slot = self.slot()?;
            if slot.is_some() {
                return Err(Error::Busy(
                    "a scan is already running: wait for it or stop it".into(),
                ));
            }
            *slot = Some(control.clone());
        }
        let _running = Running(self);
        let mode = if full {
            ScanMode::Full
        } else {
            ScanMode::Incremental
        };
        cairn.scan_sources(only, mode, &control, on_progress)
    }

    /// Pauses, resumes or stops the running scan; false when none runs.
    pub fn control(&self, action: ScanAction) -> Result<bool, Error> {
        let slot = self.slot()?;
        let Some(control) = slot.as_ref() else {
            return Ok(false);
        };
        match action {
            ScanAction::Pause => control.pause(),
            ScanAction::Resume => control.resume(),
            ScanAction::Stop => control.stop(),
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_scan_is_refused_while_one_runs_and_allowed_after() -> Result<(), Error> {
        let dir = tempfile::tempdir().map_err(|e| Error::Internal(e.to_string()))?;
        let cairn = Cairn::new(cairn_config::Home::at(dir.path()));
        let scans = Scans::default();
        assert!(!scans.control(ScanAction::Pause)?, "nothing runs");
        // A scan holds the slot: the other door is refused, and the control reaches it.
        *scans.slot()? = Some(Arc::new(ScanControl::default()));
        let refused = scans.run(&cairn, None, false, &mut |_| {});
        assert!(matches!(refused, Err(Error::Busy(_))), "{refused:?}");
        assert!(scans.control(ScanAction::Stop)?);
        *scans.slot()? = None;
        // A scan that fails frees the slot as one that ends does.
        let unknown = scans.run(&cairn, Some("no-such-agent"), false, &mut |_| {});
        assert!(
            matches!(unknown, Err(Error::UnknownSource(_))),
            "{unknown:?}"
        );
        assert!(!scans.running());
        Ok(())
    }
}
